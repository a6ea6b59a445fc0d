"""How relevant each old tool result still is: TF-IDF cosine against the recent conversation.

Documents are the tool results on the context; the query is the recent user messages and the
assistant's recent text. Term counts are kept per result (``TermCache``), so a new line costs only
its own text; idf is recomputed from document frequencies kept up to date incrementally.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from ctxtop.engine.analysis.sections import is_typed_user_message
from ctxtop.engine.analysis.snapshot import Relevance
from ctxtop.engine.sessions.model import Block, Message, SessionState
from ctxtop.engine.sessions.tool_calls import RESULTS_WITHOUT_CALL

RECENT_USER_MESSAGES = 3
RECENT_ASSISTANT_MESSAGES = 10
_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,}|[0-9]{2,}")
# Very common words carry no relevance signal in either English text or code.
_STOP = frozenset(
    [
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "if",
        "in",
        "is",
        "it",
        "no",
        "of",
        "on",
        "or",
        "so",
        "to",
        "we",
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "from",
        "are",
        "was",
        "were",
        "not",
        "but",
        "you",
        "your",
        "have",
        "has",
        "had",
        "its",
        "into",
        "then",
        "than",
        "them",
        "they",
        "there",
        "their",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "would",
        "can",
        "could",
        "should",
        "shall",
        "all",
        "any",
        "some",
        "our",
        "out",
        "about",
        "let",
        "lets",
        "now",
        "also",
        "just",
        "only",
        "very",
        "more",
        "most",
        "such",
    ]
)


def terms(text: str) -> Counter[str]:
    """Lower-cased word and identifier terms of a text (parts of snake/camel case kept whole)."""
    if text.isascii():  # (lowering first finds the same terms: 4x less work on big texts)
        counts = Counter(_TERM.findall(text.lower()))
    else:  # (a non-ASCII letter may lower to an ASCII one: "K" (Kelvin) to "k")
        counts = Counter(match.lower() for match in _TERM.findall(text))
    for stop in _STOP.intersection(counts):
        del counts[stop]
    return counts


class TermCache:
    """Term counts of documents by key, with document frequencies over the current set."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}
        self._texts: dict[str, int] = {}  # length of the text each count was made from
        self.document_frequency: Counter[str] = Counter()
        # Moves on whenever a document comes, goes or changes: idf, and so every document's
        # norm, is then different.
        self.generation = 0

    def update(self, documents: Iterable[tuple[str, str]]) -> None:
        """Make the cache hold exactly ``documents`` (key, text); unchanged ones are not redone."""
        wanted: dict[str, str] = dict(documents)
        for key in [key for key in self.counts if key not in wanted]:
            self.document_frequency.subtract(self.counts.pop(key).keys())
            del self._texts[key]
            self.generation += 1
        for key, text in wanted.items():
            if key in self.counts and self._texts[key] == len(text):
                continue
            if key in self.counts:
                self.document_frequency.subtract(self.counts[key].keys())
            counts = terms(text)
            self.counts[key] = counts
            self._texts[key] = len(text)
            self.generation += 1
            self.document_frequency.update(counts.keys())


def idf(document_frequency: int, documents: int) -> float:
    """Smoothed inverse document frequency (a term in every document still weighs a little)."""
    return math.log((1 + documents) / (1 + document_frequency)) + 1.0


def coverage(
    document: Counter[str], carrier: Counter[str], weight: Callable[[str], float]
) -> float:
    """How much of ``document``'s distinctive content ``carrier`` holds (0..1): the share of its
    TF-IDF weight (count times ``weight``, the term's idf) in terms the carrier has too. A
    document without terms has nothing to lose: 1."""
    total = held = 0.0
    for term, count in document.items():
        value = count * weight(term)
        total += value
        if term in carrier:
            held += value
    return held / total if total else 1.0


def _norm(counts: Counter[str], frequency: Counter[str], total: int) -> float:
    return math.sqrt(sum((n * idf(frequency[t], total)) ** 2 for t, n in counts.items()))


class Scorer:
    """Cosine similarity (0..1) of each document's TF-IDF vector with a query's.

    Document norms are kept while the documents stay the same: they are the results before the
    newest user message, so they change once a turn, not on every line. They are worked out
    again whenever the documents change (idf changes with them), so that a live session scores
    as a cold read of the same lines does (an approximation kept until the number of documents
    moved by a tenth made the dashboard's scores differ from the report's).
    """

    def __init__(self) -> None:
        self._norms: dict[str, float] = {}
        self._generation = -1  # the term cache's generation the norms were made for
        self._query: Counter[str] = Counter()
        self._keys: list[str] = []
        self._result: dict[str, float] = {}

    def scores(
        self, cache: TermCache, keys: Sequence[str], query: Counter[str]
    ) -> dict[str, float]:
        # A new tool result that is not old yet changes nothing here: the same answer again.
        same = cache.generation == self._generation
        if same and query == self._query and list(keys) == self._keys:
            return self._result
        self._query, self._keys = Counter(query), list(keys)
        self._result = self._score(cache, keys, query)
        return self._result

    def _score(
        self, cache: TermCache, keys: Sequence[str], query: Counter[str]
    ) -> dict[str, float]:
        total = len(cache.counts)
        frequency = cache.document_frequency
        if cache.generation != self._generation:
            self._norms.clear()
            self._generation = cache.generation
        weights = {t: n * idf(frequency.get(t, 0), total) for t, n in query.items()}
        query_norm = math.sqrt(sum(w * w for w in weights.values()))
        # A document term's weight is count x idf; times the query's weight for the dot product.
        factors = {t: w * idf(frequency.get(t, 0), total) for t, w in weights.items()}
        result: dict[str, float] = {}
        for key in keys:
            counts = cache.counts[key]
            norm = self._norms.get(key)
            if norm is None:
                norm = self._norms[key] = _norm(counts, frequency, total)
            dot = 0.0
            if len(factors) < len(counts):
                for term, factor in factors.items():
                    dot += counts.get(term, 0) * factor
            else:
                for term, found in counts.items():
                    dot += found * factors.get(term, 0.0)
            result[key] = min(dot / (norm * query_norm), 1.0) if norm and query_norm else 0.0
        return result


class RelevanceIndex:
    """Scores the tool results before the newest user message against the recent conversation
    (least relevant first)."""

    def __init__(self) -> None:
        self._terms = TermCache()
        self._scorer = Scorer()

    def rank(
        self,
        state: SessionState,
        context: Sequence[Message],
        user_index: int | None,
        tokens_of: Callable[[Block], int],
    ) -> tuple[Relevance, ...]:
        """``tokens_of``: a block's token count (the session's ledger)."""
        documents: list[tuple[str, str]] = []
        sizes: dict[str, int] = {}
        end = user_index if user_index is not None else len(context)
        for message in context[:end]:
            for block in message.blocks:
                if block.kind == "tool_result" and block.tool_call_id:
                    documents.append((block.tool_call_id, block.content()))
                    sizes[block.tool_call_id] = tokens_of(block)
        self._terms.update(documents)
        query: Counter[str] = Counter()
        users = 0
        assistants = 0
        for message in reversed(context):
            if users < RECENT_USER_MESSAGES and is_typed_user_message(message):
                users += 1
            elif assistants < RECENT_ASSISTANT_MESSAGES and message.role == "assistant":
                assistants += 1
            else:
                continue
            for block in message.blocks:
                if block.kind == "text":
                    query.update(terms(block.content()))
            if users >= RECENT_USER_MESSAGES and assistants >= RECENT_ASSISTANT_MESSAGES:
                break
        keys = [key for key, _ in documents]
        scored = (
            self._scorer.scores(self._terms, keys, query) if query else dict.fromkeys(keys, 0.0)
        )
        rows = [
            Relevance(
                tool_call_id=key,
                tool=state.tools[key].name if key in state.tools else RESULTS_WITHOUT_CALL,
                tokens=sizes[key],
                score=round(scored[key], 4),
            )
            for key in keys
        ]
        return tuple(sorted(rows, key=lambda row: (row.score, -row.tokens)))
