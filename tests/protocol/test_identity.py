"""Identity: keys, names, fingerprints and the key file."""

from __future__ import annotations

import hashlib
import re
import stat
import threading
from pathlib import Path

import pytest

from p2p_nerts.protocol.identity import (
    IDENTITY_FILE,
    Identity,
    IdentityError,
    clean_name,
    default_data_dir,
    fingerprint_of,
    load_or_create,
    verify,
)

SEED = bytes(range(32))


def test_sign_and_verify() -> None:
    me = Identity.generate("Ana")
    sig = me.sign(b"hello")
    assert len(me.public_key) == 32 and len(sig) == 64
    assert verify(me.public_key, sig, b"hello")
    assert not verify(me.public_key, sig, b"hellO")
    assert not verify(Identity.generate("Bo").public_key, sig, b"hello")
    assert not verify(me.public_key[:31], sig, b"hello")
    assert not verify(me.public_key, sig[:63], b"hello")
    assert not verify(b"\xff" * 32, sig, b"hello")


def test_libsodium_and_openssl_agree() -> None:
    """Entries are signed and checked with libsodium; the key file and handshake
    use cryptography's (OpenSSL's) key: both must give the same bytes and verdicts."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    me = Identity.from_seed(SEED, "Ana")
    for data in (b"", b"hello", bytes(range(256)) * 4):
        sig = me.sign(data)
        assert sig == me.private_key.sign(data)
        Ed25519PublicKey.from_public_bytes(me.public_key).verify(sig, data)  # raises if not
        assert verify(me.public_key, me.private_key.sign(data), data)
    # A small-order key with the all-zero signature: the cheat libsodium refuses
    # (it would "verify" any message); it must not count as valid here.
    identity_point = bytes([1]) + bytes(31)
    assert not verify(identity_point, bytes([1]) + bytes(63), b"anything")


def test_from_seed_is_deterministic() -> None:
    a, b = Identity.from_seed(SEED, "Ana"), Identity.from_seed(SEED, "Ana")
    assert a == b and a.seed == SEED
    assert a.sign(b"x") == b.sign(b"x")
    with pytest.raises(IdentityError):
        Identity.from_seed(SEED[:31], "Ana")


def test_repr_hides_the_private_key() -> None:
    me = Identity.from_seed(SEED, "Ana")
    assert SEED.hex() not in repr(me) and "private" not in repr(me)


def test_fingerprint() -> None:
    me = Identity.from_seed(SEED, "Ana")
    assert re.fullmatch(r"[0-9a-f]{4}(-[0-9a-f]{4}){3}", me.fingerprint)
    assert me.fingerprint.replace("-", "") == hashlib.sha256(me.public_key).hexdigest()[:16]
    assert fingerprint_of(me.public_key) == me.fingerprint


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Ana", "Ana"),
        ("  Ana \t", "Ana"),
        ("Zoë", "Zoë"),
        ("Zoe\u0308", "Zoë"),
        ("x" * 24, "x" * 24),
    ],
)
def test_clean_name_accepts(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean
    assert Identity.from_seed(SEED, raw).name == clean


@pytest.mark.parametrize("raw", ["", "   ", "x" * 25, "A\x1b[31mna", "A\nna", "A\u200bna"])
def test_clean_name_rejects(raw: str) -> None:
    with pytest.raises(ValueError):
        clean_name(raw)
    with pytest.raises(IdentityError):
        Identity.from_seed(SEED, raw)


def test_renamed_keeps_key() -> None:
    me = Identity.from_seed(SEED, "Ana")
    other = me.renamed("Anna")
    assert other.public_key == me.public_key and other.name == "Anna"


def test_load_or_create_creates_private_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / IDENTITY_FILE
    me = load_or_create(path, "Ana")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
    again = load_or_create(path)
    assert again == me and again.seed == me.seed
    assert sorted(p.name for p in path.parent.iterdir()) == [IDENTITY_FILE]


def test_load_or_create_default_name(tmp_path: Path) -> None:
    me = load_or_create(tmp_path / IDENTITY_FILE)
    assert me.name == "Player-" + me.fingerprint[:4]


def test_load_or_create_renames_in_place(tmp_path: Path) -> None:
    path = tmp_path / IDENTITY_FILE
    me = load_or_create(path, "Ana")
    renamed = load_or_create(path, " Bo ")
    assert renamed.public_key == me.public_key and renamed.name == "Bo"
    assert load_or_create(path).name == "Bo"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create(path, "Bo") == renamed
    with pytest.raises(IdentityError, match="bad name"):
        load_or_create(path, "\x07")


def test_concurrent_creation_agrees(tmp_path: Path) -> None:
    path = tmp_path / IDENTITY_FILE
    keys: list[bytes] = []

    def run() -> None:
        keys.append(load_or_create(path).public_key)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keys) == 8 and len(set(keys)) == 1
    assert keys[0] == load_or_create(path).public_key


GOOD = b"NZID\x01" + SEED + b"Ana"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        GOOD[:10],
        GOOD[:37],  # header only, no name
        b"XXID\x01" + SEED + b"Ana",
        b"NZID\x02" + SEED + b"Ana",
        b"NZID\x01" + SEED + b"\xff\xfe",
        b"NZID\x01" + SEED + b"A\x1bna",
        b"NZID\x01" + SEED + b"x" * 200,
    ],
)
def test_corrupt_file_is_a_clear_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / IDENTITY_FILE
    path.write_bytes(data)
    with pytest.raises(IdentityError, match=re.escape(str(path))):
        load_or_create(path, "Ana")
    assert path.read_bytes() == data  # never overwritten


def test_good_file_loads(tmp_path: Path) -> None:
    path = tmp_path / IDENTITY_FILE
    path.write_bytes(GOOD)
    assert load_or_create(path) == Identity.from_seed(SEED, "Ana")


def test_unreadable_path_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / IDENTITY_FILE
    path.mkdir()
    with pytest.raises(IdentityError, match="cannot read"):
        load_or_create(path, "Ana")


def test_unwritable_dir_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("os.link", no_links)
    with pytest.raises(IdentityError, match="cannot write"):
        load_or_create(tmp_path / IDENTITY_FILE, "Ana")
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_data_dir({"NERTS_HOME": "/x/n"}) == Path("/x/n")
    both = {"NERTS_HOME": "/x/n", "XDG_DATA_HOME": "/d"}
    assert default_data_dir(both) == Path("/x/n")
    assert default_data_dir({"XDG_DATA_HOME": "/d"}) == Path("/d/p2p-nerts")
    home_dir = tmp_path / ".local" / "share" / "p2p-nerts"
    assert default_data_dir({"XDG_DATA_HOME": "rel"}) == home_dir
    assert default_data_dir({"NERTS_HOME": ""}) == home_dir
    monkeypatch.delenv("NERTS_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg")
    assert default_data_dir() == Path("/xdg/p2p-nerts")
