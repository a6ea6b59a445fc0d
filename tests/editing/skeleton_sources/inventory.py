"""Inventory service: stock levels, reservations and reorder suggestions for a small warehouse.

The store is an SQLite database; every change goes through ``InventoryService`` so that
reservations never exceed stock and each movement is journaled.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    sku TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    unit_cost TEXT NOT NULL,
    on_hand INTEGER NOT NULL DEFAULT 0,
    reserved INTEGER NOT NULL DEFAULT 0,
    reorder_point INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS movements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sku TEXT NOT NULL REFERENCES items(sku),
    kind TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    at TEXT NOT NULL
);
"""


class MovementKind(Enum):
    RECEIVE = "receive"
    SHIP = "ship"
    ADJUST = "adjust"
    RESERVE = "reserve"
    RELEASE = "release"


class InventoryError(Exception):
    """A movement that would break an invariant (negative stock, over-reservation)."""


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    unit_cost: Decimal
    on_hand: int = 0
    reserved: int = 0
    reorder_point: int = 0

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved

    @property
    def stock_value(self) -> Decimal:
        return self.unit_cost * self.on_hand


@dataclass
class Movement:
    sku: str
    kind: MovementKind
    quantity: int
    at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))


@dataclass
class ReorderSuggestion:
    sku: str
    name: str
    short_by: int
    suggested_quantity: int
    estimated_cost: Decimal


def _row_to_item(row: sqlite3.Row) -> Item:
    return Item(
        sku=row["sku"],
        name=row["name"],
        unit_cost=Decimal(row["unit_cost"]),
        on_hand=row["on_hand"],
        reserved=row["reserved"],
        reorder_point=row["reorder_point"],
    )


class InventoryService:
    """All stock changes for one database file."""

    def __init__(self, path: str, *, lot_size: int = 12) -> None:
        self._connection = sqlite3.connect(path)
        self._connection.row_factory = sqlite3.Row
        self._connection.executescript(SCHEMA)
        self.lot_size = lot_size

    def close(self) -> None:
        self._connection.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        cursor = self._connection.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE")
            yield cursor
            self._connection.commit()
        except Exception:
            self._connection.rollback()
            raise
        finally:
            cursor.close()

    def add_item(self, sku: str, name: str, unit_cost: Decimal, reorder_point: int = 0) -> Item:
        if not sku.strip():
            raise InventoryError("a SKU cannot be empty")
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT INTO items (sku, name, unit_cost, reorder_point) VALUES (?, ?, ?, ?)",
                (sku, name, str(unit_cost), reorder_point),
            )
        log.info("added item %s (%s)", sku, name)
        return Item(sku, name, unit_cost, reorder_point=reorder_point)

    def get(self, sku: str) -> Item:
        row = self._connection.execute("SELECT * FROM items WHERE sku = ?", (sku,)).fetchone()
        if row is None:
            raise KeyError(sku)
        return _row_to_item(row)

    def items(self) -> list[Item]:
        rows = self._connection.execute("SELECT * FROM items ORDER BY sku").fetchall()
        return [_row_to_item(row) for row in rows]

    def receive(self, sku: str, quantity: int) -> Item:
        """Goods arrived: stock goes up."""
        if quantity <= 0:
            raise InventoryError(f"cannot receive {quantity} of {sku}")
        return self._move(Movement(sku, MovementKind.RECEIVE, quantity))

    def reserve(self, sku: str, quantity: int) -> Item:
        item = self.get(sku)
        if quantity > item.available:
            raise InventoryError(
                f"cannot reserve {quantity} of {sku}: only {item.available} available"
            )
        return self._move(Movement(sku, MovementKind.RESERVE, quantity))

    def release(self, sku: str, quantity: int) -> Item:
        item = self.get(sku)
        quantity = min(quantity, item.reserved)
        return self._move(Movement(sku, MovementKind.RELEASE, quantity))

    def ship(self, sku: str, quantity: int) -> Item:
        """Reserved goods leave the warehouse: both stock and reservation go down."""
        item = self.get(sku)
        if quantity > item.reserved:
            raise InventoryError(f"cannot ship {quantity} of {sku}: {item.reserved} reserved")
        return self._move(Movement(sku, MovementKind.SHIP, quantity))

    def _move(self, movement: Movement) -> Item:
        deltas = {
            MovementKind.RECEIVE: (movement.quantity, 0),
            MovementKind.SHIP: (-movement.quantity, -movement.quantity),
            MovementKind.ADJUST: (movement.quantity, 0),
            MovementKind.RESERVE: (0, movement.quantity),
            MovementKind.RELEASE: (0, -movement.quantity),
        }
        on_hand_delta, reserved_delta = deltas[movement.kind]
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE items SET on_hand = on_hand + ?, reserved = reserved + ? WHERE sku = ?",
                (on_hand_delta, reserved_delta, movement.sku),
            )
            if cursor.rowcount != 1:
                raise KeyError(movement.sku)
            cursor.execute(
                "INSERT INTO movements (sku, kind, quantity, at) VALUES (?, ?, ?, ?)",
                (movement.sku, movement.kind.value, movement.quantity, movement.at.isoformat()),
            )
        return self.get(movement.sku)

    def history(self, sku: str, since: dt.datetime | None = None) -> list[Movement]:
        query = "SELECT sku, kind, quantity, at FROM movements WHERE sku = ?"
        params: list[object] = [sku]
        if since is not None:
            query += " AND at >= ?"
            params.append(since.isoformat())
        rows = self._connection.execute(query + " ORDER BY id", params).fetchall()
        return [
            Movement(
                row["sku"],
                MovementKind(row["kind"]),
                row["quantity"],
                dt.datetime.fromisoformat(row["at"]),
            )
            for row in rows
        ]

    def reorder_suggestions(self) -> list[ReorderSuggestion]:
        """Items at or below their reorder point, with a quantity rounded up to whole lots."""
        suggestions = []
        for item in self.items():
            if item.available > item.reorder_point:
                continue
            short_by = item.reorder_point - item.available + 1
            lots = -(-short_by // self.lot_size)
            quantity = lots * self.lot_size
            suggestions.append(
                ReorderSuggestion(
                    item.sku, item.name, short_by, quantity, item.unit_cost * quantity
                )
            )
        suggestions.sort(key=lambda s: s.estimated_cost, reverse=True)
        return suggestions


def movement_totals(movements: Iterable[Movement]) -> dict[str, dict[MovementKind, int]]:
    """Quantities per SKU and kind, for the monthly report."""
    totals: dict[str, dict[MovementKind, int]] = defaultdict(lambda: defaultdict(int))
    for movement in movements:
        totals[movement.sku][movement.kind] += movement.quantity
    return {sku: dict(kinds) for sku, kinds in totals.items()}


def stock_value(items: Iterable[Item]) -> Decimal:
    return sum((item.stock_value for item in items), Decimal(0))


def format_report(service: InventoryService) -> str:
    lines = [f"{'SKU':<12} {'name':<30} {'on hand':>8} {'reserved':>9} {'value':>12}"]
    for item in service.items():
        lines.append(
            f"{item.sku:<12} {item.name[:30]:<30} {item.on_hand:>8} {item.reserved:>9} "
            f"{item.stock_value:>12.2f}"
        )
    lines.append(f"total stock value: {stock_value(service.items()):.2f}")
    suggestions = service.reorder_suggestions()
    if suggestions:
        lines.append("")
        lines.append("reorder:")
        for suggestion in suggestions:
            lines.append(
                f"  {suggestion.sku}: {suggestion.suggested_quantity} "
                f"(short by {suggestion.short_by}, ~{suggestion.estimated_cost:.2f})"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    logging.basicConfig(level=logging.INFO)
    service = InventoryService(sys.argv[1] if len(sys.argv) > 1 else ":memory:")
    try:
        print(format_report(service))
    finally:
        service.close()
