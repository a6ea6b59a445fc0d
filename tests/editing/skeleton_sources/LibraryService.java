package com.example.library.service;

import java.time.Clock;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Loans, holds and fines for a public library branch.
 *
 * <p>A copy is either on the shelf, on loan, or held for the first member in its queue.
 */
public class LibraryService {

    public static final int LOAN_DAYS = 21;
    public static final int MAX_RENEWALS = 2;
    public static final long FINE_CENTS_PER_DAY = 25;
    public static final long MAX_FINE_CENTS = 1_000;

    public enum CopyState { ON_SHELF, ON_LOAN, ON_HOLD, LOST }

    public record Loan(String copyId, String memberId, LocalDate due, int renewals) {
        public Loan renewed(LocalDate newDue) {
            return new Loan(copyId, memberId, newDue, renewals + 1);
        }
    }

    public static class LibraryException extends RuntimeException {
        public LibraryException(String message) {
            super(message);
        }
    }

    private final Clock clock;
    private final Map<String, CopyState> copies = new ConcurrentHashMap<>();
    private final Map<String, Loan> loans = new ConcurrentHashMap<>();
    private final Map<String, List<String>> holdQueues = new ConcurrentHashMap<>();
    private final Map<String, Long> finesCents = new ConcurrentHashMap<>();

    public LibraryService(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    public void addCopy(String copyId) {
        if (copies.putIfAbsent(copyId, CopyState.ON_SHELF) != null) {
            throw new LibraryException("copy " + copyId + " already exists");
        }
    }

    public Loan checkOut(String copyId, String memberId) {
        CopyState state = stateOf(copyId);
        if (finesCents.getOrDefault(memberId, 0L) >= MAX_FINE_CENTS) {
            throw new LibraryException("member " + memberId + " owes too much to borrow");
        }
        switch (state) {
            case ON_SHELF:
                break;
            case ON_HOLD:
                List<String> queue = holdQueues.getOrDefault(copyId, List.of());
                if (queue.isEmpty() || !queue.get(0).equals(memberId)) {
                    throw new LibraryException("copy " + copyId + " is held for someone else");
                }
                queue.remove(0);
                break;
            default:
                throw new LibraryException("copy " + copyId + " is " + state);
        }
        Loan loan = new Loan(copyId, memberId, today().plusDays(LOAN_DAYS), 0);
        loans.put(copyId, loan);
        copies.put(copyId, CopyState.ON_LOAN);
        return loan;
    }

    public Loan renew(String copyId) {
        Loan loan = Optional.ofNullable(loans.get(copyId))
                .orElseThrow(() -> new LibraryException("copy " + copyId + " is not on loan"));
        if (loan.renewals() >= MAX_RENEWALS) {
            throw new LibraryException("copy " + copyId + " cannot be renewed again");
        }
        if (!holdQueues.getOrDefault(copyId, List.of()).isEmpty()) {
            throw new LibraryException("copy " + copyId + " has holds waiting");
        }
        Loan renewed = loan.renewed(loan.due().plusDays(LOAN_DAYS));
        loans.put(copyId, renewed);
        return renewed;
    }

    public long checkIn(String copyId) {
        Loan loan = loans.remove(copyId);
        if (loan == null) {
            throw new LibraryException("copy " + copyId + " is not on loan");
        }
        long fine = fineFor(loan, today());
        if (fine > 0) {
            finesCents.merge(loan.memberId(), fine, Long::sum);
        }
        List<String> queue = holdQueues.getOrDefault(copyId, List.of());
        copies.put(copyId, queue.isEmpty() ? CopyState.ON_SHELF : CopyState.ON_HOLD);
        return fine;
    }

    public int placeHold(String copyId, String memberId) {
        stateOf(copyId);
        List<String> queue = holdQueues.computeIfAbsent(copyId, id -> new ArrayList<>());
        synchronized (queue) {
            if (queue.contains(memberId)) {
                return queue.indexOf(memberId) + 1;
            }
            queue.add(memberId);
            return queue.size();
        }
    }

    public List<Loan> overdueLoans() {
        LocalDate today = today();
        return loans.values().stream()
                .filter(loan -> loan.due().isBefore(today))
                .sorted(Comparator.comparing(Loan::due))
                .collect(Collectors.toList());
    }

    public Map<String, Long> finesByMember() {
        return Map.copyOf(finesCents);
    }

    static long fineFor(Loan loan, LocalDate returnedOn) {
        long daysLate = ChronoUnit.DAYS.between(loan.due(), returnedOn);
        if (daysLate <= 0) {
            return 0;
        }
        return Math.min(daysLate * FINE_CENTS_PER_DAY, MAX_FINE_CENTS);
    }

    private CopyState stateOf(String copyId) {
        CopyState state = copies.get(copyId);
        if (state == null) {
            throw new LibraryException("no copy " + copyId);
        }
        return state;
    }

    private LocalDate today() {
        return LocalDate.now(clock);
    }
}
