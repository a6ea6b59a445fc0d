<?php

declare(strict_types=1);

namespace App\Http\Controllers;

use App\Models\Customer;
use App\Models\Invoice;
use App\Models\InvoiceLine;
use App\Services\PdfRenderer;
use App\Services\TaxCalculator;
use DateTimeImmutable;
use InvalidArgumentException;
use Psr\Log\LoggerInterface;

/**
 * Invoices for the customer portal: list, show, create drafts, finalize, download as PDF.
 */
final class InvoiceController
{
    private const PAGE_SIZE = 25;
    private const STATUSES = ['draft', 'open', 'paid', 'void'];

    public function __construct(
        private readonly TaxCalculator $taxes,
        private readonly PdfRenderer $pdf,
        private readonly LoggerInterface $logger,
    ) {
    }

    public function index(Customer $customer, array $query): array
    {
        $status = $query['status'] ?? null;
        if ($status !== null && !in_array($status, self::STATUSES, true)) {
            throw new InvalidArgumentException("unknown status: {$status}");
        }
        $page = max(1, (int) ($query['page'] ?? 1));
        $invoices = Invoice::query()
            ->where('customer_id', $customer->id)
            ->when($status, fn ($q) => $q->where('status', $status))
            ->orderByDesc('issued_at')
            ->forPage($page, self::PAGE_SIZE)
            ->get();

        return [
            'data' => array_map(fn (Invoice $invoice) => $this->summary($invoice), $invoices->all()),
            'page' => $page,
        ];
    }

    public function show(Customer $customer, int $id): array
    {
        $invoice = $this->findForCustomer($customer, $id);
        $lines = [];
        foreach ($invoice->lines as $line) {
            $lines[] = [
                'description' => $line->description,
                'quantity' => $line->quantity,
                'unit_price' => $this->money($line->unit_price_cents),
                'total' => $this->money($line->quantity * $line->unit_price_cents),
            ];
        }

        return $this->summary($invoice) + ['lines' => $lines];
    }

    public function createDraft(Customer $customer, array $input): array
    {
        if (empty($input['lines']) || !is_array($input['lines'])) {
            throw new InvalidArgumentException('a draft needs at least one line');
        }
        $invoice = new Invoice([
            'customer_id' => $customer->id,
            'status' => 'draft',
            'currency' => $customer->currency,
        ]);
        $invoice->save();
        foreach ($input['lines'] as $index => $line) {
            $this->validateLine($line, $index);
            $invoice->lines()->save(new InvoiceLine([
                'description' => trim($line['description']),
                'quantity' => (int) $line['quantity'],
                'unit_price_cents' => (int) $line['unit_price_cents'],
            ]));
        }
        $this->logger->info('draft invoice created', ['invoice' => $invoice->id]);

        return $this->show($customer, $invoice->id);
    }

    public function finalize(Customer $customer, int $id): array
    {
        $invoice = $this->findForCustomer($customer, $id);
        if ($invoice->status !== 'draft') {
            throw new InvalidArgumentException("only drafts can be finalized, this one is {$invoice->status}");
        }
        $subtotal = 0;
        foreach ($invoice->lines as $line) {
            $subtotal += $line->quantity * $line->unit_price_cents;
        }
        $tax = $this->taxes->forCustomer($customer, $subtotal);
        $invoice->fill([
            'status' => 'open',
            'subtotal_cents' => $subtotal,
            'tax_cents' => $tax,
            'total_cents' => $subtotal + $tax,
            'number' => $this->nextNumber(),
            'issued_at' => new DateTimeImmutable(),
        ])->save();

        return $this->summary($invoice);
    }

    public function download(Customer $customer, int $id): string
    {
        $invoice = $this->findForCustomer($customer, $id);
        if ($invoice->status === 'draft') {
            throw new InvalidArgumentException('drafts cannot be downloaded');
        }

        return $this->pdf->render('invoices.pdf', ['invoice' => $invoice, 'customer' => $customer]);
    }

    private function findForCustomer(Customer $customer, int $id): Invoice
    {
        $invoice = Invoice::query()->where('customer_id', $customer->id)->find($id);
        if ($invoice === null) {
            throw new InvalidArgumentException("no invoice {$id}");
        }

        return $invoice;
    }

    private function validateLine(mixed $line, int $index): void
    {
        if (!is_array($line)) {
            throw new InvalidArgumentException("line {$index} must be an object");
        }
        foreach (['description', 'quantity', 'unit_price_cents'] as $field) {
            if (!array_key_exists($field, $line)) {
                throw new InvalidArgumentException("line {$index} lacks {$field}");
            }
        }
        if ((int) $line['quantity'] <= 0) {
            throw new InvalidArgumentException("line {$index}: quantity must be positive");
        }
    }

    private function summary(Invoice $invoice): array
    {
        return [
            'id' => $invoice->id,
            'number' => $invoice->number,
            'status' => $invoice->status,
            'total' => $this->money((int) $invoice->total_cents),
            'issued_at' => $invoice->issued_at?->format(DATE_ATOM),
        ];
    }

    private function money(int $cents): string
    {
        return sprintf('%d.%02d', intdiv($cents, 100), abs($cents % 100));
    }

    private function nextNumber(): string
    {
        $last = Invoice::query()->whereNotNull('number')->max('number');
        $sequence = $last === null ? 1 : ((int) substr($last, -6)) + 1;

        return sprintf('INV-%s-%06d', date('Y'), $sequence);
    }
}
