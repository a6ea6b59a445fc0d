// Package orders serves the order API: create, fetch, list and cancel orders, backed by a
// Store interface (Postgres in production, a map in tests).
package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Status of an order through its life.
type Status string

const (
	StatusPending   Status = "pending"
	StatusPaid      Status = "paid"
	StatusShipped   Status = "shipped"
	StatusCancelled Status = "cancelled"
)

var (
	ErrNotFound      = errors.New("order not found")
	ErrNotCancelable = errors.New("order can no longer be cancelled")
)

// Line is one product in an order.
type Line struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitCents int64  `json:"unit_cents"`
}

// Order as stored and returned by the API.
type Order struct {
	ID         int64     `json:"id"`
	CustomerID string    `json:"customer_id"`
	Lines      []Line    `json:"lines"`
	Status     Status    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
}

// Total is the sum of the lines, in cents.
func (o Order) Total() int64 {
	var total int64
	for _, line := range o.Lines {
		total += int64(line.Quantity) * line.UnitCents
	}
	return total
}

// Store persists orders.
type Store interface {
	Create(ctx context.Context, order Order) (Order, error)
	Get(ctx context.Context, id int64) (Order, error)
	List(ctx context.Context, customerID string, limit int) ([]Order, error)
	SetStatus(ctx context.Context, id int64, status Status) error
}

// MemoryStore is the Store used in tests.
type MemoryStore struct {
	mu     sync.Mutex
	nextID int64
	orders map[int64]Order
}

func NewMemoryStore() *MemoryStore {
	return &MemoryStore{nextID: 1, orders: make(map[int64]Order)}
}

func (s *MemoryStore) Create(_ context.Context, order Order) (Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	order.ID = s.nextID
	s.nextID++
	s.orders[order.ID] = order
	return order, nil
}

func (s *MemoryStore) Get(_ context.Context, id int64) (Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	order, ok := s.orders[id]
	if !ok {
		return Order{}, ErrNotFound
	}
	return order, nil
}

func (s *MemoryStore) List(_ context.Context, customerID string, limit int) ([]Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []Order
	for _, order := range s.orders {
		if order.CustomerID == customerID {
			found = append(found, order)
		}
		if len(found) == limit {
			break
		}
	}
	return found, nil
}

func (s *MemoryStore) SetStatus(_ context.Context, id int64, status Status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	order, ok := s.orders[id]
	if !ok {
		return ErrNotFound
	}
	order.Status = status
	s.orders[id] = order
	return nil
}

// Handler serves /orders.
type Handler struct {
	Store  Store
	Logger *slog.Logger
	Now    func() time.Time
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/orders":
		h.create(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/orders":
		h.list(w, r)
	case r.Method == http.MethodGet:
		h.get(w, r)
	case r.Method == http.MethodDelete:
		h.cancel(w, r)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var order Order
	if err := json.NewDecoder(r.Body).Decode(&order); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(order.Lines) == 0 {
		http.Error(w, "an order needs at least one line", http.StatusUnprocessableEntity)
		return
	}
	order.Status = StatusPending
	order.CreatedAt = h.Now()
	created, err := h.Store.Create(r.Context(), order)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	id, err := orderID(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	order, err := h.Store.Get(r.Context(), id)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, order)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if raw := r.URL.Query().Get("limit"); raw != "" {
		parsed, err := strconv.Atoi(raw)
		if err != nil || parsed <= 0 || parsed > 500 {
			http.Error(w, "limit must be 1..500", http.StatusBadRequest)
			return
		}
		limit = parsed
	}
	orders, err := h.Store.List(r.Context(), r.URL.Query().Get("customer"), limit)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, orders)
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	id, err := orderID(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	order, err := h.Store.Get(r.Context(), id)
	if err != nil {
		h.fail(w, err)
		return
	}
	if order.Status != StatusPending && order.Status != StatusPaid {
		h.fail(w, ErrNotCancelable)
		return
	}
	if err := h.Store.SetStatus(r.Context(), id, StatusCancelled); err != nil {
		h.fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, ErrNotCancelable):
		http.Error(w, err.Error(), http.StatusConflict)
	default:
		h.Logger.Error("order request failed", "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
}

func orderID(path string) (int64, error) {
	var id int64
	if _, err := fmt.Sscanf(path, "/orders/%d", &id); err != nil {
		return 0, fmt.Errorf("bad order path %q", path)
	}
	return id, nil
}

func writeJSON(w http.ResponseWriter, status int, value any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(value)
}
