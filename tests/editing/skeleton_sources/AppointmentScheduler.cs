using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;

namespace Clinic.Scheduling;

/// <summary>A bookable time range for one practitioner.</summary>
public readonly record struct Slot(Guid PractitionerId, DateTimeOffset Start, TimeSpan Length)
{
    public DateTimeOffset End => Start + Length;

    public bool Overlaps(Slot other) =>
        PractitionerId == other.PractitionerId && Start < other.End && other.Start < End;
}

public enum AppointmentStatus
{
    Booked,
    CheckedIn,
    Completed,
    Cancelled,
    NoShow,
}

public sealed class Appointment
{
    public Guid Id { get; init; } = Guid.NewGuid();
    public Guid PatientId { get; init; }
    public Slot Slot { get; init; }
    public AppointmentStatus Status { get; set; } = AppointmentStatus.Booked;
    public string? Notes { get; set; }
}

public interface IAppointmentRepository
{
    Task<IReadOnlyList<Appointment>> ForPractitionerAsync(Guid practitionerId, DateOnly day, CancellationToken ct);
    Task<Appointment?> FindAsync(Guid id, CancellationToken ct);
    Task SaveAsync(Appointment appointment, CancellationToken ct);
}

public class SchedulingException : Exception
{
    public SchedulingException(string message) : base(message) { }
}

public class AppointmentScheduler
{
    private static readonly TimeSpan DayStart = TimeSpan.FromHours(8);
    private static readonly TimeSpan DayEnd = TimeSpan.FromHours(18);
    private readonly IAppointmentRepository _repository;
    private readonly ILogger<AppointmentScheduler> _logger;
    private readonly TimeProvider _time;
    private readonly SemaphoreSlim _bookingLock = new(1, 1);

    public AppointmentScheduler(
        IAppointmentRepository repository,
        ILogger<AppointmentScheduler> logger,
        TimeProvider? time = null)
    {
        _repository = repository ?? throw new ArgumentNullException(nameof(repository));
        _logger = logger;
        _time = time ?? TimeProvider.System;
    }

    public TimeSpan MinimumNotice { get; set; } = TimeSpan.FromHours(2);

    public async Task<IReadOnlyList<Slot>> FreeSlotsAsync(
        Guid practitionerId, DateOnly day, TimeSpan length, CancellationToken ct = default)
    {
        var booked = await _repository.ForPractitionerAsync(practitionerId, day, ct);
        var taken = booked
            .Where(a => a.Status is AppointmentStatus.Booked or AppointmentStatus.CheckedIn)
            .Select(a => a.Slot)
            .ToList();
        var free = new List<Slot>();
        var dayStart = new DateTimeOffset(day.ToDateTime(TimeOnly.MinValue), TimeSpan.Zero) + DayStart;
        for (var start = dayStart; start + length <= dayStart - DayStart + DayEnd; start += length)
        {
            var candidate = new Slot(practitionerId, start, length);
            if (start < _time.GetUtcNow() + MinimumNotice)
            {
                continue;
            }
            if (!taken.Any(slot => slot.Overlaps(candidate)))
            {
                free.Add(candidate);
            }
        }
        return free;
    }

    public async Task<Appointment> BookAsync(Guid patientId, Slot slot, CancellationToken ct = default)
    {
        if (slot.Start < _time.GetUtcNow() + MinimumNotice)
        {
            throw new SchedulingException("too late to book this slot");
        }
        await _bookingLock.WaitAsync(ct);
        try
        {
            var day = DateOnly.FromDateTime(slot.Start.UtcDateTime);
            var existing = await _repository.ForPractitionerAsync(slot.PractitionerId, day, ct);
            if (existing.Any(a => a.Status == AppointmentStatus.Booked && a.Slot.Overlaps(slot)))
            {
                throw new SchedulingException("slot already taken");
            }
            var appointment = new Appointment { PatientId = patientId, Slot = slot };
            await _repository.SaveAsync(appointment, ct);
            _logger.LogInformation("Booked {Appointment} for {Patient}", appointment.Id, patientId);
            return appointment;
        }
        finally
        {
            _bookingLock.Release();
        }
    }

    public async Task CancelAsync(Guid appointmentId, string reason, CancellationToken ct = default)
    {
        var appointment = await _repository.FindAsync(appointmentId, ct)
            ?? throw new SchedulingException($"no appointment {appointmentId}");
        switch (appointment.Status)
        {
            case AppointmentStatus.Booked:
            case AppointmentStatus.CheckedIn:
                appointment.Status = AppointmentStatus.Cancelled;
                appointment.Notes = reason;
                await _repository.SaveAsync(appointment, ct);
                break;
            default:
                throw new SchedulingException($"cannot cancel an appointment that is {appointment.Status}");
        }
    }

    public async Task<int> MarkNoShowsAsync(Guid practitionerId, DateOnly day, CancellationToken ct = default)
    {
        var now = _time.GetUtcNow();
        var count = 0;
        foreach (var appointment in await _repository.ForPractitionerAsync(practitionerId, day, ct))
        {
            if (appointment.Status == AppointmentStatus.Booked && appointment.Slot.End < now)
            {
                appointment.Status = AppointmentStatus.NoShow;
                await _repository.SaveAsync(appointment, ct);
                count++;
            }
        }
        return count;
    }
}
