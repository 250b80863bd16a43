"""A player's long-lived Ed25519 identity and its on-disk key file.

The public key *is* the player: every wire entry names its author by key and is
signed by it, so peers need no server to tell who said what. The display name
is only a label; the fingerprint is what a human compares to tell two "Ana"s
apart.

The key file holds a raw 32-byte seed plus the name. It is created with mode
0o600 and appears at its final path in one atomic step, so a crash never leaves
a half-written identity and two processes starting at once end up sharing one
key instead of clobbering each other.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import CryptoError

__all__ = [
    "IDENTITY_FILE",
    "MAX_NAME_LEN",
    "PUBLIC_KEY_LEN",
    "SIGNATURE_LEN",
    "Identity",
    "IdentityError",
    "clean_name",
    "default_data_dir",
    "fingerprint_of",
    "load_or_create",
    "verify",
]

# Final, so the compiled modules that import them read them as constants
# (the envelope checks two of them for every frame).
PUBLIC_KEY_LEN: Final = 32
SIGNATURE_LEN: Final = 64
SEED_LEN: Final = 32
MAX_NAME_LEN: Final = 24

# Key file layout: magic + format version, seed, UTF-8 name.  The magic makes a
# wrong file (or a future format) an explicit error rather than a garbage key.
_FILE_MAGIC = b"NZID\x01"
_FILE_HEADER_LEN = len(_FILE_MAGIC) + SEED_LEN
_MAX_FILE_LEN = _FILE_HEADER_LEN + 4 * MAX_NAME_LEN
IDENTITY_FILE = "identity.key"


class IdentityError(Exception):
    """The identity file is missing pieces, corrupt or unusable (message says how)."""


def clean_name(name: str) -> str:
    """Return the canonical form of a display name, or raise ValueError.

    Names end up in every peer's terminal, so control characters (escape
    sequences could repaint someone else's screen) and blank names are refused
    here, once, for local and wire names alike.
    """
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not 1 <= len(cleaned) <= MAX_NAME_LEN:
        raise ValueError(f"a name must have 1 to {MAX_NAME_LEN} characters")
    if not cleaned.isprintable():
        raise ValueError("a name must contain only printable characters")
    return cleaned


def fingerprint_of(public_key: bytes) -> str:
    """Short form of a key for humans: first 8 bytes of its SHA-256, e.g. ab12-cd34-ef56-7890."""
    digest = hashlib.sha256(public_key).hexdigest()[:16]
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


def verify(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """True iff `signature` is a valid Ed25519 signature of `data` by `public_key`.

    Any malformed input (wrong lengths, a key that is not a curve point) is just
    an invalid signature: callers handle untrusted bytes and want a yes/no.

    libsodium (through PyNaCl) rather than OpenSSL (through cryptography) does
    the work: every peer checks every entry, and libsodium's check is 2.2x as
    fast here (36 vs 81 µs), the largest single cost of a received play.  It is
    also the stricter of the two (it refuses small-order keys and points), and
    every peer runs the same check, so peers still agree on what is valid.
    """
    if len(public_key) != PUBLIC_KEY_LEN or len(signature) != SIGNATURE_LEN:
        return False
    try:
        crypto_sign_open(signature + data, public_key)
    except CryptoError:
        return False
    return True


@dataclass(frozen=True)
class Identity:
    """A private key and the display name it plays under.

    `public_key` is derived, never passed in, so it can never disagree with the
    private key.  The private key is kept out of repr and comparisons.
    """

    private_key: Ed25519PrivateKey = field(repr=False, compare=False)
    name: str
    public_key: bytes = field(init=False)
    _signing_key: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name = _checked_name(self.name)
        raw = self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        public, secret = crypto_sign_seed_keypair(
            self.private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()))
        assert public == raw  # one key, two libraries
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "public_key", raw)
        object.__setattr__(self, "_signing_key", secret)

    @classmethod
    def generate(cls, name: str) -> Identity:
        """A fresh random identity (not saved anywhere)."""
        return cls(Ed25519PrivateKey.generate(), name)

    @classmethod
    def from_seed(cls, seed: bytes, name: str) -> Identity:
        """Rebuild an identity from its 32-byte seed (key files, test vectors)."""
        if len(seed) != SEED_LEN:
            raise IdentityError(f"a private key seed has {SEED_LEN} bytes, not {len(seed)}")
        return cls(Ed25519PrivateKey.from_private_bytes(seed), name)

    @property
    def seed(self) -> bytes:
        """The raw 32-byte private seed: secret, only for the key file."""
        return self.private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    @property
    def fingerprint(self) -> str:
        """What players read aloud to check they see the same person."""
        return fingerprint_of(self.public_key)

    def sign(self, data: bytes) -> bytes:
        """Ed25519 signature (64 bytes, deterministic) of `data`.

        libsodium signs in 15 µs where OpenSSL takes 25; Ed25519 signatures
        are deterministic, so both give the very same bytes.
        """
        return crypto_sign(data, self._signing_key)[:SIGNATURE_LEN]

    def renamed(self, name: str) -> Identity:
        """Same key, another display name."""
        return Identity(self.private_key, name)


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where p2p-nerts keeps its files: $NERTS_HOME, else the XDG data dir.

    `environ` defaults to os.environ; tests pass their own mapping.
    """
    env = os.environ if environ is None else environ
    if env.get("NERTS_HOME"):
        return Path(env["NERTS_HOME"]).expanduser()
    xdg = env.get("XDG_DATA_HOME", "")
    # The XDG spec says relative paths are invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "p2p-nerts"
    return Path.home() / ".local" / "share" / "p2p-nerts"


def check_data_dir(directory: Path) -> None:
    """Make sure ``directory`` is a directory, making it if need be; else IdentityError.

    Checked first, before anyone is asked a name that could not be kept.
    """
    if directory.exists() and not directory.is_dir():
        raise IdentityError(f"the data dir {directory} is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except NotADirectoryError:
        raise IdentityError(f"the data dir {directory} cannot be made: part of its path "
                            "is a file, not a directory") from None
    except OSError as exc:
        raise IdentityError(f"cannot make the data dir {directory}: {exc.strerror}") from None


def load_or_create(path: Path, name: str | None = None, *, kind: str = "Player") -> Identity:
    """Load the identity stored at `path`, creating it if there is none.

    `name` is the display name: used for a new identity, and if it differs
    from the stored one the file is updated (same key).  With `name=None` the
    stored name is kept, and a new identity is called "<kind>-xxxx" after its
    fingerprint ("Bot-xxxx" for ``nerts bot``: the table sees who is a
    computer).  Problems with the file raise IdentityError with a message
    fit to show the user.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _create(path, name, kind)
    except NotADirectoryError:
        raise IdentityError(f"the data dir {path.parent} is not a directory") from None
    except OSError as exc:
        raise IdentityError(f"cannot read identity file {path}: {exc.strerror}") from None
    identity = _decode(path, data)
    if name is not None and _checked_name(name) != identity.name:
        identity = identity.renamed(name)
        _write_atomically(path, _encode(identity), replace=True)
    return identity


def _checked_name(name: str) -> str:
    """clean_name for user input: the error is an IdentityError with the reason."""
    try:
        return clean_name(name)
    except ValueError as exc:
        raise IdentityError(f"bad name {name!r}: {exc}") from None


def _create(path: Path, name: str | None, kind: str) -> Identity:
    seed = secrets.token_bytes(SEED_LEN)
    if name is None:
        pub = Ed25519PrivateKey.from_private_bytes(seed).public_key()
        name = f"{kind}-" + fingerprint_of(pub.public_bytes(Encoding.Raw, PublicFormat.Raw))[:4]
    identity = Identity.from_seed(seed, name)
    if not _write_atomically(path, _encode(identity), replace=False):
        # Another process created it between our read and our link: use theirs.
        return load_or_create(path, name)
    return identity


def _encode(identity: Identity) -> bytes:
    return _FILE_MAGIC + identity.seed + identity.name.encode("utf-8")


def _decode(path: Path, data: bytes) -> Identity:
    hint = "move it away to start with a new identity"
    if len(data) > _MAX_FILE_LEN or len(data) <= _FILE_HEADER_LEN:
        raise IdentityError(f"identity file {path} has a bad size ({len(data)} bytes); {hint}")
    if not data.startswith(_FILE_MAGIC):
        raise IdentityError(f"{path} is not a p2p-nerts identity file; {hint}")
    seed = data[len(_FILE_MAGIC) : _FILE_HEADER_LEN]
    try:
        name = data[_FILE_HEADER_LEN:].decode("utf-8")
        return Identity.from_seed(seed, name)
    except (UnicodeDecodeError, IdentityError):
        raise IdentityError(f"identity file {path} has a corrupt name; {hint}") from None


def _write_atomically(path: Path, data: bytes, *, replace: bool) -> bool:
    """Write `data` to `path` with mode 0o600, all or nothing.

    The bytes go to a fresh temporary file (O_EXCL, 0o600) next to `path`,
    which is then linked into place (fails if `path` exists: returns False) or,
    with `replace`, renamed over it.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if replace:
                os.replace(tmp, path)
                return True
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            return True
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise IdentityError(f"cannot write identity file {path}: {exc.strerror}") from None
