"""Skeletons of realistic source files: signatures kept, bodies elided, the token budget met."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctxtop.engine.editing.skeleton import language_for_path, skeleton
from ctxtop.engine.tokens.encoding import get_encoding

SOURCES = Path(__file__).parent / "skeleton_sources"
COUNT = get_encoding("o200k_base").count

# file, token budget, lines the outline must keep (signatures, headers), lines of bodies that
# must be gone. Written by hand from the files, not from the skeletons.
CASES = [
    (
        "inventory.py",
        700,
        [
            "from decimal import Decimal",
            "class InventoryService:",
            "    def reserve(self, sku: str, quantity: int) -> Item:",
            "    def reorder_suggestions(self) -> list[ReorderSuggestion]:",
            "def format_report(service: InventoryService) -> str:",
            "    def available(self) -> int:",
        ],
        ["lots = -(-short_by // self.lot_size)", 'cursor.execute("BEGIN IMMEDIATE")'],
    ),
    (
        "rate_limiter.js",
        500,
        [
            "const crypto = require('node:crypto');",
            "class TokenBucketLimiter extends EventEmitter {",
            "  async take(key, cost = 1) {",
            "  middleware() {",
            "function errorHandler(error, request, response, next) {",
        ],
        ["const allowed = bucket.tokens >= cost;", "this.emit('error', error);"],
    ),
    (
        "event_store.ts",
        600,
        [
            'import { randomUUID } from "node:crypto";',
            "export interface StorageAdapter {",
            "export class EventStore {",
            "  subscribe(listener: (event: EventEnvelope) => void): () => void {",
            "  async execute<TState, TCommand>(",
            "export async function* replay(",
        ],
        ["const decided = decide(state, command);", "yield* batch;"],
    ),
    (
        "TaskBoard.tsx",
        450,
        [
            'import React, { useCallback, useEffect, useMemo, useReducer, useState } from "react";',
            "function reducer(state: State, action: Action): State {",
            "export interface TaskBoardProps {",
            "function useTasks(projectId: string) {",
            "export function TaskBoard({ projectId, currentUserId, onOpenTask, readOnly = false }: "
            "TaskBoardProps) {",
        ],
        ["await saveTask({ ...task, status });", "<h2>{column.title}</h2>"],
    ),
    (
        "subscription_billing.rb",
        500,
        [
            'require "bigdecimal"',
            "  class Subscription",
            "    def transition_to(new_state, at: Date.today)",
            "    def change_plan(new_plan, on: Date.today)",
            "  class InvoiceRun",
            "    def notify_declined(subscription, error)",
        ],
        ["days_left = (current_period_end - on).to_i", "Mailer.deliver(:update_card"],
    ),
    (
        "lru_cache.rs",
        600,
        [
            "use std::collections::HashMap;",
            "pub struct LruCache<K, V> {",
            "impl<K: Hash + Eq + Clone, V> LruCache<K, V> {",
            "    pub fn insert(&mut self, key: K, value: V) -> Option<V> {",
            "    fn push_front(&mut self, index: usize) {",
            "pub enum CacheError {",
        ],
        ["self.slab[index].prev = NIL;", "let total = self.hits + self.misses;"],
    ),
    (
        "orders_handler.go",
        700,
        [
            "package orders",
            '\t"net/http"',
            "type Store interface {",
            "func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {",
            "func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {",
            "func writeJSON(w http.ResponseWriter, status int, value any) {",
        ],
        ["order.CreatedAt = h.Now()", "s.nextID++"],
    ),
    (
        "LibraryService.java",
        550,
        [
            "import java.util.concurrent.ConcurrentHashMap;",
            "public class LibraryService {",
            "    public long checkIn(String copyId) {",
            "    public int placeHold(String copyId, String memberId) {",
            "    private LocalDate today() {",
        ],
        ["queue.add(memberId);", "finesCents.merge(loan.memberId(), fine, Long::sum);"],
    ),
    (
        "ring_buffer.hpp",
        600,
        [
            "#include <atomic>",
            "class SpscRing {",
            "  bool push(T value) noexcept {",
            "  std::optional<T> pop() noexcept {",
            "inline std::size_t Resampler::process(const float* input, std::size_t count,",
        ],
        ["position_ -= 1.0;", "head_.store(next, std::memory_order_release);"],
    ),
    (
        "AppointmentScheduler.cs",
        560,
        [
            "using Microsoft.Extensions.Logging;",
            "public class AppointmentScheduler",
            "    public async Task<Appointment> BookAsync(Guid patientId, Slot slot, "
            "CancellationToken ct = default)",
            "    Task SaveAsync(Appointment appointment, CancellationToken ct);",
            "public enum AppointmentStatus",
        ],
        ["_bookingLock.Release();", "free.Add(candidate);"],
    ),
    (
        "InvoiceController.php",
        500,
        [
            "use Psr\\Log\\LoggerInterface;",
            "final class InvoiceController",
            "    public function finalize(Customer $customer, int $id): array",
            "    private function nextNumber(): string",
        ],
        ["$subtotal += $line->quantity * $line->unit_price_cents;", "intdiv($cents, 100)"],
    ),
    (
        "WeatherRepository.kt",  # no grammar here: indentation folding
        220,
        [
            "import java.time.Instant",
            "sealed class WeatherResult {",
            "    suspend fun forecast(city: String, refresh: Boolean = false): WeatherResult {",
            "    fun cachedCities(): List<String> {",
        ],
        ["cache[key] = fresh", "return cache.keys.sorted()"],
    ),
]


@pytest.mark.parametrize(("name", "budget", "kept", "elided"), CASES, ids=[c[0] for c in CASES])
def test_skeleton_keeps_signatures_and_elides_bodies(
    name: str, budget: int, kept: list[str], elided: list[str]
) -> None:
    path = SOURCES / name
    text = path.read_text(encoding="utf-8")
    language = language_for_path(str(path))
    assert language is not None
    result = skeleton(text, language, budget, COUNT)
    assert result.fits and result.tokens <= budget
    assert COUNT(result.text) == result.tokens
    assert COUNT(text) > 2 * budget  # a real cut, not a file that fit anyway
    lines = result.text.splitlines()
    for line in kept:
        assert any(found.startswith(line) for found in lines), f"{line!r} missing"
    for fragment in elided:
        assert fragment not in result.text
    assert "..." in result.text


def test_source_files_are_real_size() -> None:
    for name, *_ in CASES:
        lines = (SOURCES / name).read_text(encoding="utf-8").count("\n")
        assert 60 <= lines <= 400, name
    assert sum(1 for name, *_ in CASES if (SOURCES / name).read_text().count("\n") >= 150) >= 10


def test_python_skeleton_is_still_python() -> None:
    text = (SOURCES / "inventory.py").read_text(encoding="utf-8")
    for budget in (300, 700, 1200):
        outline = skeleton(text, language_for_path("x.py"), budget, COUNT)  # type: ignore[arg-type]
        ast.parse(outline.text)  # bodies became "...": still a valid module


def test_a_bigger_budget_keeps_more_and_the_whole_file_fits_unchanged() -> None:
    text = (SOURCES / "lru_cache.rs").read_text(encoding="utf-8")
    language = language_for_path("lru.rs")
    assert language is not None
    small = skeleton(text, language, 400, COUNT)
    large = skeleton(text, language, 1000, COUNT)
    assert small.tokens < large.tokens <= 1000
    assert "let expires_at = self.ttl.map(|ttl| Instant::now() + ttl);" in large.text
    assert skeleton(text, language, 10_000, COUNT).text == text


def test_focus_keeps_its_region_in_detail() -> None:
    text = (SOURCES / "orders_handler.go").read_text(encoding="utf-8")
    language = language_for_path("h.go")
    assert language is not None
    focus_line = "\tif order.Status != StatusPending && order.Status != StatusPaid {"
    start = text.index(focus_line)
    result = skeleton(text, language, 500, COUNT, focus=(start, start + len(focus_line)))
    assert result.fits
    assert focus_line in result.text  # the focused method's body is there
    assert "h.fail(w, ErrNotCancelable)" in result.text
    assert "order.CreatedAt = h.Now()" not in result.text  # other bodies are not


def test_shrinks_by_15_percent_until_it_fits_at_most_5_times() -> None:
    text = (SOURCES / "event_store.ts").read_text(encoding="utf-8")
    language = language_for_path("s.ts")
    assert language is not None

    def three_chars_a_token(value: str) -> int:
        return -(-len(value) // 3)

    result = skeleton(text, language, 400, three_chars_a_token)
    # 4 characters a token overshoots 3-character tokens: 1200 > 1.15 x 1020 > 867 chars fits
    assert result.fits and 1 <= result.shrinks <= 3
    hopeless = skeleton(text, language, 400, len)  # one token per character: never fits
    assert hopeless.shrinks == 5 and not hopeless.fits


def test_numbered_lines_keep_the_original_numbers() -> None:
    text = (SOURCES / "inventory.py").read_text(encoding="utf-8")
    numbers = list(range(101, 101 + text.count("\n") + 1))
    result = skeleton(text, language_for_path("a.py"), 900, COUNT, numbers=numbers)  # type: ignore[arg-type]
    assert result.fits
    original = text.splitlines()
    row = original.index("    def ship(self, sku: str, quantity: int) -> Item:")
    assert f"{row + 101:>6}→    def ship(self, sku: str, quantity: int) -> Item:" in result.text
    assert f"{'':>6}→        ...\n" in result.text


def test_non_ascii_text_keeps_its_signatures() -> None:
    text = (
        '"""Grüße → ünïcödé everywhere: 日本語."""\n\n'
        'GREETING = "¡hola! 👋"\n\n\n'
        "def grüßen(name: str) -> str:\n"
        '    message = f"{GREETING} {name} — willkommen"\n'
        "    return message.upper()\n\n\n"
        "class Café:\n"
        "    def bestellen(self, getränk: str) -> None:\n"
        '        print("☕", getränk)\n'
    )
    result = skeleton(text, language_for_path("g.py"), 60, COUNT)  # type: ignore[arg-type]
    assert "def grüßen(name: str) -> str:\n    ...\n" in result.text
    assert "    def bestellen(self, getränk: str) -> None:\n        ...\n" in result.text
    ast.parse(result.text)


def test_language_for_path() -> None:
    assert language_for_path("/src/App.TSX").name == "tsx"  # type: ignore[union-attr]
    assert language_for_path("C:\\code\\main.go").name == "go"  # type: ignore[union-attr]
    assert language_for_path("notes.md") is None
    assert language_for_path("Makefile") is None


def test_yaml_folds_by_indentation() -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  labels:\n"
        "    app: api\n    tier: backend\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n"
        "      app: api\n  template:\n    metadata:\n      labels:\n        app: api\n"
        "    spec:\n      containers:\n        - name: api\n          image: registry/api:1.4.2\n"
        "          ports:\n            - containerPort: 8080\n          env:\n"
        + "".join(
            f"            - name: SETTING_{n}\n              value: '{n}'\n" for n in range(30)
        )
    )
    result = skeleton(manifest, language_for_path("deploy.yaml"), 60, COUNT)  # type: ignore[arg-type]
    assert result.fits
    for key in ("apiVersion: apps/v1", "kind: Deployment", "metadata:", "spec:"):
        assert f"\n{key}\n" in f"\n{result.text}"
    assert "SETTING_29" not in result.text and "  ...\n" in result.text
