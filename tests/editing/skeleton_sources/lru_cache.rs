//! A bounded least-recently-used cache with optional time-to-live, used in front of the
//! metadata store. Entries live in a slab; the recency list is intrusive (indices, not pointers).

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

const NIL: usize = usize::MAX;

/// Counters exposed on the metrics endpoint.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub expirations: u64,
}

impl Stats {
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            return 0.0;
        }
        self.hits as f64 / total as f64
    }
}

#[derive(Debug)]
struct Entry<K, V> {
    key: K,
    value: V,
    expires_at: Option<Instant>,
    prev: usize,
    next: usize,
}

/// Why an insert did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheError {
    ZeroCapacity,
    ValueTooLarge { size: usize, limit: usize },
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::ZeroCapacity => write!(f, "cache capacity is zero"),
            CacheError::ValueTooLarge { size, limit } => {
                write!(f, "value of {size} bytes exceeds the {limit}-byte limit")
            }
        }
    }
}

impl std::error::Error for CacheError {}

pub struct LruCache<K, V> {
    map: HashMap<K, usize>,
    slab: Vec<Entry<K, V>>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    capacity: usize,
    ttl: Option<Duration>,
    stats: Stats,
}

impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
    pub fn new(capacity: usize) -> Result<Self, CacheError> {
        if capacity == 0 {
            return Err(CacheError::ZeroCapacity);
        }
        Ok(Self {
            map: HashMap::with_capacity(capacity),
            slab: Vec::with_capacity(capacity),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity,
            ttl: None,
            stats: Stats::default(),
        })
    }

    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn get(&mut self, key: &K) -> Option<&V> {
        let index = match self.map.get(key) {
            Some(&index) => index,
            None => {
                self.stats.misses += 1;
                return None;
            }
        };
        if self.is_expired(index, Instant::now()) {
            self.remove_index(index);
            self.stats.expirations += 1;
            self.stats.misses += 1;
            return None;
        }
        self.stats.hits += 1;
        self.detach(index);
        self.push_front(index);
        Some(&self.slab[index].value)
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let expires_at = self.ttl.map(|ttl| Instant::now() + ttl);
        if let Some(&index) = self.map.get(&key) {
            let old = std::mem::replace(&mut self.slab[index].value, value);
            self.slab[index].expires_at = expires_at;
            self.detach(index);
            self.push_front(index);
            return Some(old);
        }
        if self.map.len() == self.capacity {
            let oldest = self.tail;
            self.remove_index(oldest);
            self.stats.evictions += 1;
        }
        let entry = Entry { key: key.clone(), value, expires_at, prev: NIL, next: NIL };
        let index = match self.free.pop() {
            Some(index) => {
                self.slab[index] = entry;
                index
            }
            None => {
                self.slab.push(entry);
                self.slab.len() - 1
            }
        };
        self.map.insert(key, index);
        self.push_front(index);
        None
    }

    pub fn purge_expired(&mut self) -> usize {
        let now = Instant::now();
        let expired: Vec<usize> = self
            .map
            .values()
            .copied()
            .filter(|&index| self.is_expired(index, now))
            .collect();
        for &index in &expired {
            self.remove_index(index);
        }
        self.stats.expirations += expired.len() as u64;
        expired.len()
    }

    fn is_expired(&self, index: usize, now: Instant) -> bool {
        matches!(self.slab[index].expires_at, Some(at) if at <= now)
    }

    fn remove_index(&mut self, index: usize) {
        self.detach(index);
        self.map.remove(&self.slab[index].key);
        self.free.push(index);
    }

    fn detach(&mut self, index: usize) {
        let (prev, next) = (self.slab[index].prev, self.slab[index].next);
        if prev != NIL {
            self.slab[prev].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.slab[next].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    fn push_front(&mut self, index: usize) {
        self.slab[index].prev = NIL;
        self.slab[index].next = self.head;
        if self.head != NIL {
            self.slab[self.head].prev = index;
        }
        self.head = index;
        if self.tail == NIL {
            self.tail = index;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut cache = LruCache::new(2).unwrap();
        cache.insert("a", 1);
        cache.insert("b", 2);
        assert_eq!(cache.get(&"a"), Some(&1));
        cache.insert("c", 3);
        assert_eq!(cache.get(&"b"), None);
        assert_eq!(cache.stats().evictions, 1);
    }

    #[test]
    fn zero_capacity_is_an_error() {
        assert_eq!(LruCache::<u8, u8>::new(0).err(), Some(CacheError::ZeroCapacity));
    }
}
