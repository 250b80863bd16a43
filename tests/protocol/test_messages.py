"""Message payloads: round trips for every type, strict rejection, fuzzing."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2p_nerts.protocol.envelope import (
    DOMAIN,
    GENESIS,
    MAGIC,
    MAX_INT,
    PROTOCOL_VERSION,
    EnvelopeError,
    open_entry,
    open_link_entry,
)
from p2p_nerts.protocol.identity import Identity
from p2p_nerts.protocol.messages import (
    MAX_COUNTDOWN_MS,
    MAX_DROP_AFTER_MS,
    MIN_DROP_AFTER_MS,
    Ack,
    AckMark,
    Audit,
    Commit,
    Drop,
    Fork,
    Go,
    Goodbye,
    Head,
    Hello,
    Join,
    Leave,
    MsgType,
    Nerts,
    Payload,
    Play,
    Ready,
    Refuse,
    Resend,
    Result,
    Reveal,
    Roster,
    Seat,
    Settings,
    Snapshot,
    Stuck,
    Summary,
    Total,
    Verdict,
    View,
    link_message,
    parse_payload,
    seal_message,
)
from p2p_nerts.protocol.replica import LINK_TYPES

ANA = Identity.from_seed(bytes(range(32)), "Ana")
K1, K2 = b"\x01" * 32, b"\x02" * 32
H = bytes(range(32))
SNAP = Snapshot(7, False, (Seat(K2, "Bo"), Seat(K1, "Ana")), Settings(target=50),
                (Total(K1, 42), Total(K2, -3)), 6,
                (Head(K1, 90, 400, H + H), Head(K2, 3, 12, H + H)))
TABLE = bytes(16)

SAMPLES: list[Payload] = [
    Hello("Ana", 1),
    Join("Zoë", None),
    Join("Bo", H),
    Leave(),
    Roster((Seat(K1, "Ana"), Seat(K2, "Bo"))),
    Roster((Seat(K2, "Bo"), Seat(K1, "Ana"))),  # the host's order, not the keys'
    Settings(),
    Settings(1, True, False, 10_000, True, "share", True),
    Settings(countdown_ms=0, drop_after_ms=MIN_DROP_AFTER_MS),
    Settings(countdown_ms=MAX_COUNTDOWN_MS, drop_after_ms=MAX_DROP_AFTER_MS),
    Ready(True),
    Commit(H, bytes(32)),
    Reveal(H),
    Go(H),
    Play(card=0x11, pile=0x11, src=0, decl=0, mv=0),
    Play(card=1023, pile=1023, src=5, decl=63, mv=MAX_INT),
    Ack(),
    Ack((AckMark(K1, 0), AckMark(K2, 99, H + H))),
    View(0, None, ((), (), (), ()), None, 0),
    View(13, 42, ((1, 2, 3), (4,), (), tuple(range(64))), 7, 35),
    Stuck(True, 12),
    Stuck(False, 0),
    Nerts(),
    Summary(H, (10, -26, 0)),
    Audit(H, ((1,), (2, 0, 17, 300, 17, 0), (6, 17, 300, -1))),
    Audit(H, ()),
    Verdict(3, False, "move 12: card 4♥ is not on top of work pile 2"),
    Verdict(0, True),
    Resend(K1, 1, 1024),
    Goodbye(),
    Goodbye("quit"),
    Drop(K1, 17),
    Refuse(K1, "the table is full"),
    Result((21, -4, 13), H),
    Fork(b"N" * 99, b"Z" * 200),
    SNAP,
    Snapshot(1, True, (Seat(K1, "Ana"),), Settings(), (), 0, ()),
]


def test_every_type_has_a_sample_and_a_parser() -> None:
    assert {p.TYPE for p in SAMPLES} == set(MsgType)


def test_every_type_is_documented_in_the_protocol_table() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    rows = {(int(m[1]), m[2]) for m in re.finditer(r"^\|\s*(\d+)\s*\|\s*([A-Z]+)\s*\|", doc, re.M)}
    assert rows == {(int(t), t.name) for t in MsgType}


@pytest.mark.parametrize("payload", SAMPLES, ids=lambda p: type(p).__name__)
def test_round_trip(payload: Payload) -> None:
    entry = seal_message(ANA, payload, table_id=TABLE, round=2, seq=3, lamport=4)
    got = open_entry(entry.raw)
    assert got.type == payload.TYPE
    assert parse_payload(got.type, got.payload) == payload
    assert dict(got.payload) == payload.to_wire()


@pytest.mark.parametrize("payload", [p for p in SAMPLES if p.TYPE in LINK_TYPES],
                         ids=lambda p: type(p).__name__)
def test_link_round_trip(payload: Payload) -> None:
    """Link entries are not decoded again when built: this is where they are checked."""
    raw = link_message(ANA.public_key, payload, table_id=TABLE, round=2, seq=3, lamport=4)
    got = open_link_entry(raw, ANA.public_key)
    assert (got.type, got.round, got.seq, got.lamport) == (payload.TYPE, 2, 3, 4)
    assert parse_payload(got.type, got.payload) == payload
    with pytest.raises(EnvelopeError, match="author_mismatch"):
        open_link_entry(raw, K1)


def test_unknown_type() -> None:
    for msg_type in (0, 7, 51, 255):
        with pytest.raises(EnvelopeError, match="unknown_type"):
            parse_payload(msg_type, {})


def wire(payload: Payload, **changes: object) -> dict[str, object]:
    data = payload.to_wire()
    data.update(changes)
    return data


def rejected(payload: Payload, changes: dict[str, object]) -> str:
    with pytest.raises(EnvelopeError) as info:
        parse_payload(payload.TYPE, wire(payload, **changes))
    return info.value.reason


PLAY = Play(card=17, pile=17, src=0, decl=0, mv=3)
VIEW = View(1, 5, ((), (), (), ()), None, 0)


#: Values that stand in for a PLAY's field: wrong types, and out of every field's range.
BAD_PLAY_VALUES: list[object] = [None, True, 1.0, "1", -1, 6, 64, 1024, MAX_INT + 1]


def test_a_play_with_fields_wrong_names_the_first_one_wrong() -> None:
    """A PLAY's fields are checked at once; one with any of them wrong is refused
    by the field checks in turn (card, pile, src, decl, mv), which name the first."""
    bounds = {"card": 1023, "pile": 1023, "src": 5, "decl": 63, "mv": MAX_INT}
    assert list(Play.KEYS) == list(bounds)

    def ok(attr: str, value: object) -> bool:
        return type(value) is int and 0 <= value <= bounds[attr]

    seen = set()
    for first, second in itertools.combinations(bounds, 2):
        for a, b in itertools.product(BAD_PLAY_VALUES, BAD_PLAY_VALUES):
            data = wire(PLAY, **{Play.KEYS[first]: a, Play.KEYS[second]: b})
            wrong = [attr for attr in bounds if not ok(attr, data[Play.KEYS[attr]])]
            if wrong:
                assert rejected(PLAY, {Play.KEYS[first]: a, Play.KEYS[second]: b}) == (
                    f"bad_field:{wrong[0]}")
                seen.add(wrong[0])
            else:  # (in range for both: src 5, decl 6 or 63, ...)
                assert parse_payload(MsgType.PLAY, data) == Play(
                    *(data[Play.KEYS[attr]] for attr in bounds))  # type: ignore[arg-type]
    assert seen == set(bounds)


@pytest.mark.parametrize(
    ("payload", "changes", "field"),
    [
        # unknown and missing keys
        (PLAY, {"z": 1}, "z"),
        (Leave(), {"x": None}, "x"),
        (Leave(), {"\x1b[2J": None}, "?"),
        (Leave(), {"k" * 17: None}, "?"),
        # wrong types
        (PLAY, {"c": True}, "card"),
        (PLAY, {"c": 1.0}, "card"),
        (PLAY, {"c": "17"}, "card"),
        (PLAY, {"c": None}, "card"),
        (Ready(True), {"r": 1}, "on"),
        (Go(H), {"j": None}, "joint"),
        (Nerts(), {"m": 1}, "m"),
        (Commit(H, H), {"d": H.hex()}, "deck"),
        (Commit(H, H), {"s": H[:31]}, "share"),
        (Join("Bo", None), {"p": b"short"}, "code_proof"),
        (Hello("Ana", 1), {"n": b"Ana"}, "name"),
        # out of range
        (PLAY, {"c": 1024}, "card"),
        (PLAY, {"c": -1}, "card"),
        (PLAY, {"p": 1024}, "pile"),
        (PLAY, {"s": 6}, "src"),
        (PLAY, {"d": 64}, "decl"),
        (PLAY, {"m": MAX_INT + 1}, "mv"),
        (Hello("Ana", 1), {"v": 0}, "version"),
        (Hello("Ana", 1), {"v": 65536}, "version"),
        (Settings(), {"st": 2}, "stock_turn"),
        (Settings(), {"st": 4}, "stock_turn"),
        (Settings(), {"ta": 0}, "target"),
        (Settings(), {"ta": 10_001}, "target"),
        (Settings(), {"te": "trios"}, "teams"),
        (Settings(), {"te": ["none"]}, "teams"),
        (Settings(), {"cd": -1}, "countdown_ms"),
        (Settings(), {"cd": MAX_COUNTDOWN_MS + 1}, "countdown_ms"),
        (Settings(), {"cd": 3.0}, "countdown_ms"),
        (Settings(), {"cd": True}, "countdown_ms"),
        (Settings(), {"cd": None}, "countdown_ms"),
        (Settings(), {"da": MIN_DROP_AFTER_MS - 1}, "drop_after_ms"),
        (Settings(), {"da": MAX_DROP_AFTER_MS + 1}, "drop_after_ms"),
        (Settings(), {"da": 6.0}, "drop_after_ms"),
        (Settings(), {"da": "6000"}, "drop_after_ms"),
        (Verdict(0, True), {"t": 8}, "seat"),
        (Resend(K1, 5, 5), {"t": 4}, "to_seq"),
        (Resend(K1, 5, 5), {"t": 5 + 1024}, "to_seq"),
        (Resend(K1, 5, 5), {"f": 0}, "from_seq"),
        # text that would reach a terminal
        (Hello("Ana", 1), {"n": " Ana"}, "name"),
        (Hello("Ana", 1), {"n": ""}, "name"),
        (Hello("Ana", 1), {"n": "x" * 25}, "name"),
        (Hello("Ana", 1), {"n": "A\x1b[2Jna"}, "name"),
        (Hello("Ana", 1), {"n": "Zoe\u0308"}, "name"),  # not NFC
        (Goodbye(), {"r": "x" * 201}, "reason"),
        (Goodbye(), {"r": "bye\r\n"}, "reason"),
        (Verdict(0, True), {"r": "\x1b]0;pwned\x07"}, "reason"),
        # lists: shape, order, size
        (Roster((Seat(K1, "Ana"),)), {"s": []}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [[K2, "B"], [K1, "A"], [K2, "C"]]}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [[K1, "A"], [K1, "B"]]}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [[bytes([i]) * 32, "P"] for i in range(9)]}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [[K1, "A", 0]]}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [[K1, "\n"]]}, "seats"),
        (Roster((Seat(K1, "Ana"),)), {"s": [(K1, "A")]}, "seats"),
        (Ack(), {"u": [[K2, 1, H + H], [K1, 1, H + H]]}, "upto"),
        (Ack(), {"u": [[K1, -1, H + H]]}, "upto"),
        (Ack(), {"u": [[K1, 1]]}, "upto"),
        (Ack(), {"u": [[K1, 1, H]]}, "upto"),  # a head is a signature: 64 bytes
        (Ack(), {"u": [[bytes([i]) * 32, 1, H + H] for i in range(33)]}, "upto"),
        (Fork(b"a", b"b"), {"a": b"", "b": b"x"}, "first"),
        (Fork(b"a", b"b"), {"a": b"x", "b": "x"}, "second"),
        (VIEW, {"t": None}, "top"),
        (VIEW, {"n": 0}, "top"),
        (VIEW, {"n": 65}, "nerts"),
        (VIEW, {"w": [[], [], []]}, "work"),
        (VIEW, {"w": [[], [], [], [], []]}, "work"),
        (VIEW, {"w": [[], [], [], list(range(65))]}, "work"),
        (VIEW, {"w": [[], [], [], [1024]]}, "work"),
        (VIEW, {"w": [[], [], [], None]}, "work"),
        (VIEW, {"x": 1024}, "waste"),
        (VIEW, {"k": 65}, "stock"),
        (Summary(H, ()), {"s": list(range(9))}, "scores"),
        (Summary(H, ()), {"s": [MAX_INT + 1]}, "scores"),
        (Audit(H, ()), {"m": [[1]] * 5001}, "moves"),
        (Audit(H, ()), {"m": [[]]}, "moves"),
        (Audit(H, ()), {"m": [[1, 2, 3, 4, 5, 6, 7]]}, "moves"),
        (Audit(H, ()), {"m": [[1, True]]}, "moves"),
        (Audit(H, ()), {"m": [1]}, "moves"),
        (Audit(H, ()), {"s": None}, "deck_secret"),
        (Audit(H, ()), {"m": [[msgpack.Timestamp(1)]]}, "moves"),
        (Result((1,), H), {"t": []}, "totals"),
        (Result((1,), H), {"t": list(range(9))}, "totals"),
        (Result((1,), H), {"t": [True]}, "totals"),
        (Result((1,), H), {"h": H[:31]}, "digest"),
        (SNAP, {"r": 0}, "round"),
        (SNAP, {"s": []}, "seats"),
        (SNAP, {"c": [1]}, "settings"),
        (SNAP, {"c": Settings().to_wire() | {"st": 2}}, "stock_turn"),
        (SNAP, {"t": [[K2, 1], [K1, 1]]}, "totals"),
        (SNAP, {"t": [[K1, 1.5]]}, "totals"),
        (SNAP, {"h": [[K1, 0, 1, H + H]]}, "heads"),
        (SNAP, {"h": [[K1, 1, 1, H]]}, "heads"),
        (SNAP, {"h": [[K2, 1, 1, H + H], [K1, 1, 1, H + H]]}, "heads"),
        (SNAP, {"h": [[bytes([i]) * 32, 1, 1, H + H] for i in range(65)]}, "heads"),
    ],
)
def test_rejects(payload: Payload, changes: dict[str, object], field: str) -> None:
    assert rejected(payload, changes) == f"bad_field:{field}"


def test_missing_keys_are_named() -> None:
    for attr, key in Play.KEYS.items():
        data = PLAY.to_wire()
        del data[key]
        with pytest.raises(EnvelopeError, match=f"bad_field:{attr}$"):
            parse_payload(MsgType.PLAY, data)


def test_payload_must_be_a_map() -> None:
    with pytest.raises(EnvelopeError, match="bad_field:payload"):
        parse_payload(MsgType.PLAY, [1, 2])  # type: ignore[arg-type]


def test_a_stray_key_that_is_not_text_is_refused_unnamed() -> None:
    """The envelope lets only text keys through; a map from elsewhere with a bytes
    or number key is refused all the same (it raised AttributeError once)."""
    for stray in (b"c", 7, None):
        with pytest.raises(EnvelopeError, match=r"bad_field:\?$"):
            parse_payload(MsgType.HELLO, {stray: 1})  # type: ignore[dict-item]


def test_limits_are_inclusive() -> None:
    big = Audit(H, tuple((MAX_INT, -MAX_INT, 0, 1, 2, 3) for _ in range(5000)))
    assert parse_payload(MsgType.AUDIT, big.to_wire()) == big
    roster = Roster(tuple(Seat(bytes([i]) * 32, "x" * 24) for i in range(8)))
    assert parse_payload(MsgType.ROSTER, roster.to_wire()) == roster


def test_realistic_audit_fits_in_one_entry() -> None:
    moves = tuple((2, 1, 0x11 + i % 400, 10_000 + i, 0x11, 0) for i in range(3000))
    e = seal_message(ANA, Audit(H, moves), table_id=TABLE, round=1, seq=1, lamport=1)
    assert parse_payload(e.type, open_entry(e.raw).payload) == Audit(H, moves)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (Play(card=2000, pile=0, src=0, decl=0, mv=0), "bad_field:card"),
        (Hello(" Ana", 1), "bad_field:name"),
        (Roster(()), "bad_field:seats"),
    ],
)
def test_seal_message_refuses_bad_payloads(payload: Payload, reason: str) -> None:
    with pytest.raises(EnvelopeError) as info:
        seal_message(ANA, payload, table_id=TABLE, round=0, seq=1, lamport=1)
    assert info.value.reason == reason


def test_seal_message_refuses_a_payload_that_parses_back_otherwise() -> None:
    # A list where a tuple belongs packs alike, and parses back as a tuple.
    # Compiled (NERTS_COMPILE=1), such a payload cannot even be built.
    if hasattr(Summary, "__mypyc_attrs__"):
        with pytest.raises(TypeError):
            Summary(H, [1, 2])  # type: ignore[arg-type]
        return
    with pytest.raises(EnvelopeError) as info:
        seal_message(ANA, Summary(H, [1, 2]), table_id=TABLE, round=0, seq=1,  # type: ignore[arg-type]
                     lamport=1)
    assert info.value.reason == "bad_field:summary"


# -- fuzz: decoded, signed garbage must give a payload or an EnvelopeError ------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)  # what msgpack can carry
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.binary(max_size=40)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner, max_size=6)
    ),
    max_leaves=8,
)
keys = st.sampled_from(sorted({k for p in SAMPLES for k in p.to_wire()})) | st.text(max_size=3)
payload_maps = st.dictionaries(keys, values, max_size=8)


def signed_frame(msg_type: int, payload: object) -> bytes:
    body = msgpack.packb([PROTOCOL_VERSION, TABLE, 0, ANA.public_key, 1, 1, msg_type, GENESIS,
                          payload], use_bin_type=True)
    return MAGIC + ANA.public_key + ANA.sign(DOMAIN + body) + body


@pytest.mark.sweep
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([*MsgType, 0, 99]), payload_maps)
def test_fuzz_signed_payloads(msg_type: int, payload: dict[str, object]) -> None:
    try:
        entry = open_entry(signed_frame(msg_type, payload))
        parsed = parse_payload(entry.type, entry.payload)
    except EnvelopeError as exc:
        assert exc.reason
        return
    assert parsed.to_wire() == entry.payload  # accepted means understood exactly


@pytest.mark.sweep
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.data())
def test_fuzz_one_field_changed(sample: Payload, data: st.DataObject) -> None:
    """Near-valid payloads: one key replaced by an arbitrary value."""
    payload = sample.to_wire()
    if payload:
        payload[data.draw(st.sampled_from(sorted(payload)))] = data.draw(values)
    try:
        parsed = parse_payload(sample.TYPE, open_entry(signed_frame(sample.TYPE, payload)).payload)
    except EnvelopeError as exc:
        assert exc.reason.startswith("bad_field:") or exc.reason == "malformed_body"
        return
    assert parsed.to_wire() == payload
