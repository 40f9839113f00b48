"""The installation's CAP signing key: an RSA key and a self-signed X.509 certificate, in one
PEM file (SAFEGROUND_CAP_SIGNING_FILE), made once when absent, readable by its owner only.

CAP 1.2 signs with XML-DSig (enveloped, RSA-SHA256): partner agencies' systems verify with
standard XML tools and a certificate, which Ed25519 (safeground/signing.py) would not give them.
A partner downloads the certificate (/api/partners/cap/certificate.pem) and trusts it.
"""

import os
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from django.conf import settings
from lxml import etree
from signxml import XMLSigner, methods

CERTIFICATE_YEARS = 10


def _make(path: Path) -> None:
    """A new key and certificate, written whole or not at all: a second process making one at
    the same moment keeps the first's (os.link refuses to replace a file)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, settings.SAFEGROUND_CAP_SENDER)])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=365 * CERTIFICATE_YEARS))
        .sign(key, hashes.SHA256())
    )
    text = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ) + certificate.public_bytes(serialization.Encoding.PEM)
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(text)
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()


@lru_cache(maxsize=2)
def _key_and_certificate(path: str) -> tuple[rsa.RSAPrivateKey, bytes]:
    """The key loaded once per process: loading checks an RSA-3072 key (~110 ms), which signing
    every alert with the PEM again would pay each time, on the request that told it. The server
    loads it before it serves (key_ready)."""
    file = Path(path)
    if not file.exists():
        _make(file)
    text = file.read_bytes()
    begin = text.index(b"-----BEGIN CERTIFICATE-----")
    key = serialization.load_pem_private_key(text[:begin], password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return key, text[begin:]


def key_ready() -> None:
    """Load the key (made, the first time) before the process serves. Checking the key holds the
    GIL all the while (87 ms here; cryptography does not release it), so loaded at the process's
    first alert, the first flashpoint warning or broadcast of a match, it stopped every request,
    scan and live frame of the process for as long."""
    _key_and_certificate(settings.SAFEGROUND_CAP_SIGNING_FILE)


def certificate_pem() -> bytes:
    return _key_and_certificate(settings.SAFEGROUND_CAP_SIGNING_FILE)[1]


def signed(xml: bytes) -> bytes:
    """`xml` (a CAP alert) with an enveloped XML-DSig signature as its last child, where the CAP
    1.2 schema allows one; the certificate is in the signature's KeyInfo."""
    key, certificate = _key_and_certificate(settings.SAFEGROUND_CAP_SIGNING_FILE)
    signer = XMLSigner(
        method=methods.enveloped, signature_algorithm="rsa-sha256", digest_algorithm="sha256"
    )
    root = signer.sign(etree.fromstring(xml), key=key, cert=certificate.decode())
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
