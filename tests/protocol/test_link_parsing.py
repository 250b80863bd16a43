"""ACK and VIEW parsing: the fast paths take and refuse exactly what the reader did.

`Ack.from_wire` checks its marks in one pass, `View.from_wire` reads its map
directly, instead of both going through `_Reader` and a checker call per
field. `reference` and `view_reference` are the parsers as they were; every
payload here, valid or not, must get from old and new the same payload or the
same one-line reason.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable, Mapping

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2p_nerts.protocol.envelope import MAX_INT, EnvelopeError
from p2p_nerts.protocol.identity import PUBLIC_KEY_LEN, SIGNATURE_LEN
from p2p_nerts.protocol.messages import (
    MAX_ACK_AUTHORS,
    MAX_CARD,
    MAX_PILE,
    WORK_PILES,
    Ack,
    AckMark,
    MsgType,
    Payload,
    View,
    parse_payload,
)
from p2p_nerts.protocol.messages._fields import _bytes, _int, _Reader, _strictly_ascending


def reference(payload: Mapping[str, object]) -> Ack:
    """The ACK parser as it was, through the reader and the field checkers."""
    r = _Reader(Ack, payload)
    marks = []
    for item in r.array("upto", MAX_ACK_AUTHORS):
        if type(item) is not list or len(item) != 3:
            raise EnvelopeError("bad_field:upto")
        author, seq, head = item
        marks.append(AckMark(_bytes(author, "upto", PUBLIC_KEY_LEN),
                             _int(seq, "upto", 0, MAX_INT),
                             _bytes(head, "upto", SIGNATURE_LEN)))
    _strictly_ascending([m.author for m in marks], "upto")
    return Ack(tuple(marks))


def view_reference(payload: Mapping[str, object]) -> View:
    """The VIEW parser as it was, through the reader, a checker call per element."""

    def ints(value: object, attr: str, max_len: int, lo: int, hi: int) -> tuple[int, ...]:
        if type(value) is not list or not 0 <= len(value) <= max_len:
            raise EnvelopeError(f"bad_field:{attr}")
        return tuple(_int(v, attr, lo, hi) for v in value)

    r = _Reader(View, payload)
    nerts = r.integer("nerts", 0, MAX_PILE)
    top = r.opt_integer("top", 0, MAX_CARD)
    if (nerts == 0) != (top is None):
        raise EnvelopeError("bad_field:top")
    piles = r.array("work", WORK_PILES, min_len=WORK_PILES)
    work = tuple(ints(pile, "work", MAX_PILE, 0, MAX_CARD) for pile in piles)
    return View(
        nerts, top, work, r.opt_integer("waste", 0, MAX_CARD), r.integer("stock", 0, MAX_PILE)
    )


def outcome(parse: Callable[[Mapping[str, object]], Payload], payload: object) -> Payload | str:
    try:
        return parse(payload)  # type: ignore[arg-type]
    except EnvelopeError as exc:
        return exc.reason


def assert_same(payload: object, old: Callable[[Mapping[str, object]], Payload] = reference,
                new: type[Payload] = Ack) -> Payload | str:
    """Old and new parser, and parse_payload as a peer calls it, agree on `payload`."""
    want = outcome(old, payload)
    assert outcome(new.from_wire, payload) == want
    assert outcome(lambda p: parse_payload(new.TYPE, p), payload) == want
    return want


def key(i: int) -> bytes:
    return bytes([i]) * PUBLIC_KEY_LEN


FULL_MARKS = tuple(AckMark(key(i + 1), 1000 * i, bytes([i]) * SIGNATURE_LEN) for i in range(8))
FULL: list[list[object]] = [list(m) for m in FULL_MARKS]

#: Values that stand in for one field of one mark: wrong types, lengths, ranges.
BAD_VALUES: list[object] = [
    None, True, False, 0, -1, MAX_INT, MAX_INT + 1, 1.0, "x", "x" * 32, b"", b"\0" * 31,
    b"\0" * 33, b"\xff" * 32, b"\0" * 63, b"\0" * 64, b"\0" * 65, bytearray(32), [], [1], (1,),
]


def mutations() -> list[object]:
    """A full-mark ACK with one thing changed, at every place it can change."""
    out: list[object] = [{"u": FULL}, {"u": []}, {"u": FULL[:1]}]
    for i, field in itertools.product(range(len(FULL)), range(3)):
        for value in BAD_VALUES:
            items = [list(m) for m in FULL]
            items[i][field] = value
            out.append({"u": items})
    for i in range(len(FULL)):
        for mark in (tuple(FULL[i]), FULL[i][:2], [*FULL[i], 0], None, {"a": 1}, b"\0" * 3):
            out.append({"u": [*FULL[:i], mark, *FULL[i + 1:]]})
        out.append({"u": [*FULL[:i], FULL[i], *FULL[i:]]})  # a mark twice
        if i:
            swapped = list(FULL)
            swapped[i - 1], swapped[i] = swapped[i], swapped[i - 1]
            out.append({"u": swapped})
    many = [[key(i), 1, b"\0" * SIGNATURE_LEN] for i in range(1, MAX_ACK_AUTHORS + 2)]
    out += [{"u": many[:MAX_ACK_AUTHORS]}, {"u": many}, {"u": tuple(FULL)}, {"u": None}]
    out += [{}, {"u": FULL, "x": 1}, {"x": 1}, {b"u": FULL}, {"u": FULL, 7: 1}, [FULL], None,
            types.MappingProxyType({"u": FULL}), types.MappingProxyType({"v": FULL})]
    return out


def test_every_mutation_of_a_full_ack_gets_the_same_answer() -> None:
    answers = [assert_same(payload) for payload in mutations()]
    # The table is worth something only if it holds both kinds of answer, and
    # more than one reason.
    assert sum(isinstance(a, Ack) for a in answers) >= 5
    assert {"bad_field:upto", "bad_field:payload", "bad_field:x", "bad_field:?"} <= set(answers)


def test_a_full_ack_parses_to_its_marks() -> None:
    ack = Ack(FULL_MARKS)
    decoded = msgpack.unpackb(msgpack.packb(ack.to_wire()))
    assert parse_payload(MsgType.ACK, decoded) == ack
    assert type(ack.upto[0]) is AckMark


VIEWS = [View(13, 42, ((1, 2, 3), (4,), (), tuple(range(MAX_PILE))), 7, 35),
         View(0, None, ((), (), (), ()), None, 0)]
VIEW_VALUES: list[object] = [
    None, True, 0, 1, -1, MAX_PILE, MAX_PILE + 1, MAX_CARD, MAX_CARD + 1, 1.0, "1", b"\1", [],
    [1], [[]] * 3, [[]] * 4, [[]] * 5, [[1024], [], [], []], [[True], [], [], []], (1,),
    list(range(MAX_PILE + 1)), [[], [], [], list(range(MAX_PILE + 1))], [[], [], [], None],
]


def view_mutations() -> list[object]:
    """Each sample view with one key's value replaced, or one pile of it, or
    its keys changed."""
    out: list[object] = []
    for view in VIEWS:
        wire = msgpack.unpackb(msgpack.packb(view.to_wire()))
        out.append(wire)
        for key, value in itertools.product(sorted(wire), VIEW_VALUES):
            out.append(wire | {key: value})
        for pile, value in itertools.product(range(WORK_PILES), VIEW_VALUES):
            work = list(wire["w"])
            work[pile] = value
            out.append(wire | {"w": work})
        for first, second in itertools.combinations(sorted(wire), 2):  # which is checked first
            out.append(wire | {first: "x", second: "x"})
        out += [wire | {"n": 0, "t": None}, wire | {"n": 1, "t": None}, wire | {"z": 1},
                {k: v for k, v in wire.items() if k != "k"}, types.MappingProxyType(wire)]
    return out


def test_every_mutation_of_a_view_gets_the_same_answer() -> None:
    answers = [assert_same(p, view_reference, View) for p in view_mutations()]
    assert sum(isinstance(a, View) for a in answers) >= 5
    assert {f"bad_field:{f}" for f in ("nerts", "top", "work", "waste", "stock", "z")} <= set(
        answers)


# -- sweep: random marks, near-valid and not, as a peer would decode them -------

values = st.one_of(
    st.binary(min_size=PUBLIC_KEY_LEN, max_size=PUBLIC_KEY_LEN),
    st.binary(min_size=SIGNATURE_LEN, max_size=SIGNATURE_LEN),
    st.binary(max_size=70),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(-2, 2) | st.integers(MAX_INT - 2, MAX_INT + 2),
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=4),
)
good_marks = st.builds(AckMark, st.binary(min_size=PUBLIC_KEY_LEN, max_size=PUBLIC_KEY_LEN),
                       st.integers(0, MAX_INT),
                       st.binary(min_size=SIGNATURE_LEN, max_size=SIGNATURE_LEN))
#: None, or where to put which value: into field 0..2 of a mark, as the whole
#: mark (3), or the mark twice (4).
changes = st.none() | st.tuples(st.integers(0, 2**16), st.integers(0, 4), values)


@pytest.mark.sweep
@settings(max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(good_marks, max_size=MAX_ACK_AUTHORS + 1, unique_by=lambda m: m.author),
       st.booleans(), changes)
def test_random_acks_get_the_same_answer(
    upto: list[AckMark], sort: bool, change: tuple[int, int, object] | None
) -> None:
    """Marks in order or not, with at most one thing changed: everything past
    the first fault is what a faster parser could get wrong unseen."""
    if sort:
        upto.sort()
    rows: list[list[object]] = [list(m) for m in upto]
    marks: list[object] = list(rows)
    if change is not None and rows:
        where, field, value = change
        i = where % len(rows)
        if field < 3:
            rows[i][field] = value
        elif field == 3:
            marks[i] = value
        else:
            marks.insert(i, rows[i])
    payload = msgpack.unpackb(msgpack.packb({"u": marks}, use_bin_type=True))
    assert_same(payload)


def mostly(good: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """`good` three times in four, else any value: a fault late in the order of
    checks is then often the first. (Not `good | values`, which would flatten
    into values' many branches and pick from them far more often.)"""
    return st.integers(0, 3).flatmap(lambda n: good if n else values)


cards = st.integers(0, MAX_CARD)
counts = st.integers(0, MAX_PILE)
works = st.lists(mostly(st.lists(cards, max_size=MAX_PILE + 1)),
                 min_size=WORK_PILES, max_size=WORK_PILES)


@pytest.mark.sweep
@settings(max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
@given(mostly(counts), mostly(st.none() | cards), mostly(works), mostly(st.none() | cards),
       mostly(counts))
def test_random_views_get_the_same_answer(
    nerts: object, top: object, work: object, waste: object, stock: object
) -> None:
    wire = {"n": nerts, "t": top, "w": work, "x": waste, "k": stock}
    assert_same(msgpack.unpackb(msgpack.packb(wire, use_bin_type=True)), view_reference, View)
