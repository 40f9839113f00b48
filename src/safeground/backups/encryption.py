"""Encrypting a backup to age public keys, through pyrage (bindings to rage, the Rust age).

No cryptography is written here: age encrypts each file to the recipients' X25519 public keys
(a server holding only those cannot decrypt), and authenticates it in 64 KiB chunks, so a changed
or cut-short file fails to decrypt. pyrage streams (`encrypt_io`/`decrypt_io`): a file of any
size is encrypted in a few MB of memory; the SHA-256s of the plaintext and of the ciphertext are
taken on the way through.
"""

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import pyrage
from pyrage import x25519

from safeground import clock

from .manifest import BackupError

SUFFIX = ".age"
SCHEME = "age"
PUBLIC_PREFIX = "age1"
SECRET_PREFIX = "AGE-SECRET-KEY-1"


def recipients_parse(keys: Iterable[str]) -> list[x25519.Recipient]:
    """age public keys (age1...), each checked; a private key given by mistake is named as one."""
    recipients: list[x25519.Recipient] = []
    seen: set[str] = set()
    for given in keys:
        key = given.strip()
        if not key:
            continue
        if key.upper().startswith(SECRET_PREFIX):
            raise BackupError(
                "recipient",
                "a private key (AGE-SECRET-KEY-1...) was given as a recipient: give its public"
                " key (age1...), and keep the private key off this server",
            )
        try:
            recipient = x25519.Recipient.from_str(key)
        except pyrage.RecipientError as error:
            raise BackupError(
                "recipient",
                f"{key!r} is not an age public key ({error}): a public key starts with age1 and is"
                " printed by `safeground backup-key`",
            ) from None
        if str(recipient) not in seen:
            seen.add(str(recipient))
            recipients.append(recipient)
    return recipients


def identities_read(path: Path) -> list[x25519.Identity]:
    """The private keys in an age identity file (as `safeground backup-key` or age-keygen write
    it: comment lines, then AGE-SECRET-KEY-1...)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BackupError("identity", f"{path}: no such identity file") from None
    except IsADirectoryError:
        raise BackupError("identity", f"{path} is a folder: give the identity file") from None
    except OSError as error:
        raise BackupError("identity", f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise BackupError("identity", f"{path} is not an age identity file (not text)") from None
    identities: list[x25519.Identity] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(PUBLIC_PREFIX):
            raise BackupError(
                "identity",
                f"{path} line {number} is a public key (age1...): restore needs the private key"
                " (AGE-SECRET-KEY-1...)",
            )
        try:
            identities.append(x25519.Identity.from_str(line))
        except pyrage.IdentityError as error:
            raise BackupError(
                "identity",
                f"{path} line {number} is not an age private key (AGE-SECRET-KEY-1...): {error}",
            ) from None
    if not identities:
        raise BackupError(
            "identity", f"{path} holds no age private key (a line AGE-SECRET-KEY-1...)"
        )
    return identities


def identity_new(path: Path) -> str:
    """A new X25519 identity written to `path` (a new file, readable by its owner only), in
    age-keygen's format; answers its public key."""
    identity = x25519.Identity.generate()
    public = str(identity.to_public())
    created = clock.utc_iso(datetime.now(UTC), "seconds")
    text = f"# created: {created}\n# public key: {public}\n{identity}\n"
    try:
        # O_EXCL: never overwrite a key that may be the only one that opens old backups.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise BackupError(
            "file", f"{path} exists: give a new file (an old key may still open old backups)"
        ) from None
    except OSError as error:
        raise BackupError("file", f"cannot create {path}: {error.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return public


def public_keys(identities: Iterable[x25519.Identity]) -> list[str]:
    return [str(identity.to_public()) for identity in identities]


class _Hashing:
    """A file object that hashes and counts what passes through it."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.digest = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.digest.update(data)
        self.size += len(data)
        return data

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.f.write(data)

    def flush(self) -> None:
        self.f.flush()


@dataclass(frozen=True)
class Sealed:
    """A file encrypted: the SHA-256 and size of what went in and of what was written."""

    plaintext_sha256: str
    plaintext_size: int
    sha256: str
    size: int


def file_encrypt(source: Path, target: Path, recipients: list[x25519.Recipient]) -> Sealed:
    try:
        with source.open("rb") as plain, target.open("xb") as sealed:
            reader, writer = _Hashing(plain), _Hashing(sealed)
            pyrage.encrypt_io(reader, writer, recipients)
    except pyrage.EncryptError as error:
        raise BackupError("recipient", f"cannot encrypt {source}: {error}") from None
    except OSError as error:
        raise BackupError(
            "dir", f"cannot encrypt {source} into {target}: {error.strerror or error}"
        ) from None
    return Sealed(reader.digest.hexdigest(), reader.size, writer.digest.hexdigest(), writer.size)


def bytes_encrypt(data: bytes, target: Path, recipients: list[x25519.Recipient]) -> Sealed:
    sealed = pyrage.encrypt(data, recipients)
    with target.open("xb") as f:
        f.write(sealed)
    return Sealed(
        hashlib.sha256(data).hexdigest(), len(data), hashlib.sha256(sealed).hexdigest(), len(sealed)
    )


def file_decrypt(source: Path, target: Path, identities: list[x25519.Identity]) -> tuple[str, int]:
    """Decrypt `source` into `target`; answers the plaintext's SHA-256 and size. A file that was
    changed, cut short or is not for these keys is refused (`target` may then hold a part)."""
    try:
        with source.open("rb") as sealed, target.open("wb") as plain:
            writer = _Hashing(plain)
            pyrage.decrypt_io(sealed, writer, identities)
    except pyrage.DecryptError as error:
        raise BackupError("identity", f"cannot decrypt {source}: {error}") from None
    except OSError as error:
        if error.errno is None:  # rage reports a chunk that fails authentication so
            raise BackupError(
                "dir", f"cannot decrypt {source}: {error} (it was changed or cut short)"
            ) from None
        raise BackupError(
            "dir",
            f"cannot decrypt into {target}: {error.strerror} (the temporary folder, TMPDIR, needs"
            " room for the decrypted backup)",
        ) from None
    return writer.digest.hexdigest(), writer.size


def bytes_decrypt(source: Path, identities: list[x25519.Identity]) -> bytes:
    try:
        return pyrage.decrypt(source.read_bytes(), identities)
    except pyrage.DecryptError as error:
        raise BackupError("identity", f"cannot decrypt {source}: {error}") from None
