"""Case bundles: export, verify, alter one file, verify names it; a corrupt file is named."""

import hashlib
import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from pypdf import PdfReader

from safeground.casework.bundle import bundle_verify
from safeground.casework.evidence import evidence_add
from safeground.casework.models import CustodyRecord, Evidence
from safeground.casework.services import case_bundle_export
from safeground.incidents.models import LogCheckpoint, LogEntry, Photo
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.services import log_checkpoint_make
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def bundle(match_day, tmp_path):
    case = factories.case(match_day.cup_tie, title="Coins thrown from S-L2")
    factories.evidence(case, description="CCTV still, camera 12")
    factories.evidence(
        case,
        kind="document",
        upload=factories.upload("leaflet.pdf", b"%PDF-1.4 leaflet", "application/pdf"),
    )
    factories.evidence(case, kind="cctv")
    entry = case.entries.get()
    phone = factories.upload("phone.png", factories.PNG + b"phone")
    log_entry_photo_add(entry=entry, author=match_day.cast["steward"], upload=phone)
    # Evidence on the case's entry, added in the locker before the case existed.
    evidence_add(
        by=match_day.cast["safety"],
        fixture=case.fixture,
        entry=entry,
        kind="screenshot",
        upload=factories.upload("post.png", factories.PNG + b"post"),
    )
    data = case_bundle_export(case=case, by=match_day.cast["police"]).read()
    path = tmp_path / "case.zip"
    path.write_bytes(data)
    return case, path


def _rewrite(path, name: str, content: bytes) -> None:
    """The bundle with one file's contents replaced (a valid ZIP: only the hash can tell)."""
    with zipfile.ZipFile(path) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    files[name] = content
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)


def test_the_bundle_holds_summary_log_evidence_and_a_manifest_of_hashes(bundle):
    case, path = bundle
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        files = {n: zf.read(n) for n in zf.namelist() if n != "manifest.json"}
        log = json.loads(zf.read("log.json"))
    assert manifest["files"] == {n: hashlib.sha256(d).hexdigest() for n, d in files.items()}
    entry = case.entries.get()
    stored = {e.sha256 for e in Evidence.objects.exclude(sha256="")} | {
        p.sha256 for p in Photo.objects.filter(entry=entry)
    }
    assert len(stored) == 4  # the still, the leaflet, the post, the steward's photo
    assert {i["sha256_at_upload"] for i in manifest["evidence"] if "file" in i} == stored
    assert [i["entry"] for i in manifest["evidence"] if "photo" in i] == [entry.seq]
    assert [i["camera"] for i in manifest["evidence"] if "camera" in i] == ["CAM 12"]
    assert [(e["seq"], e["hash"]) for e in log["entries"]] == list(
        case.entries.order_by("seq").values_list("seq", "hash")
    )
    assert log["chain_check"]["intact"] is True
    text = PdfReader(io.BytesIO(files["summary.pdf"])).pages[0].extract_text()
    assert f"Case #{case.pk}" in text and "intact" in text
    exports = CustodyRecord.objects.filter(action="export", username="police")
    assert exports.filter(evidence__isnull=False).count() == Evidence.objects.count() == 4
    assert exports.filter(photo__isnull=False).count() == 1


def test_verify_passes_then_names_the_one_altered_file(bundle, capsys):
    _, path = bundle
    call_command("verify_bundle", str(path))
    assert "files match the manifest" in capsys.readouterr().out
    with zipfile.ZipFile(path) as zf:
        altered = next(n for n in zf.namelist() if n.endswith("leaflet.pdf"))
    _rewrite(path, altered, b"%PDF-1.4 a different leaflet")
    check = bundle_verify(path)
    assert check.mismatched == [altered] and not check.missing
    with pytest.raises(CommandError):
        call_command("verify_bundle", str(path))
    assert f"DOES NOT MATCH: {altered}" in capsys.readouterr().err


def test_bytes_damaged_inside_the_zip_name_the_damaged_file(bundle):
    _, path = bundle
    with zipfile.ZipFile(path) as zf:
        info = next(i for i in zf.infolist() if i.filename == "log.json")
    raw = bytearray(path.read_bytes())
    # The member's data starts after its local header (30 bytes, the name, the extra field).
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for offset in range(start + 5, start + 15):
        raw[offset] ^= 0xFF
    path.write_bytes(bytes(raw))
    check = bundle_verify(path)
    assert check.mismatched == ["log.json"]


def test_a_removed_or_added_file_is_named(bundle):
    _, path = bundle
    with zipfile.ZipFile(path) as zf:
        files = {n: zf.read(n) for n in zf.namelist() if n != "log.json"}
    files["evidence/extra.png"] = factories.PNG
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    check = bundle_verify(path)
    assert (check.missing, check.unlisted) == (["log.json"], ["evidence/extra.png"])


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"this is not a zip", "not a ZIP file"), (None, "not a case bundle")],
)
def test_a_file_that_is_not_a_bundle_gets_a_clear_error(tmp_path, content, says):
    path = tmp_path / "x.zip"
    if content is None:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("hello.txt", "hi")
    else:
        path.write_bytes(content)
    with pytest.raises(CommandError) as error:
        call_command("verify_bundle", str(path))
    assert says in str(error.value)


def test_the_bundle_route_downloads_the_zip_for_those_who_work_cases(
    match_day, client_for, no_second_factor
):
    case = factories.case(match_day.cup_tie)
    response = client_for("safety").get(reverse("case_bundle", args=[case.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"]
    content = b"".join(response.streaming_content)
    assert zipfile.ZipFile(io.BytesIO(content)).testzip() is None
    assert client_for("steward").get(reverse("case_bundle", args=[case.pk])).status_code == 403


def test_the_bundle_carries_the_signed_checkpoints_and_the_log_checks_against_them(
    match_day, tmp_path, capsys
):
    case = factories.case(match_day.cup_tie, title="Coins thrown from S-L2")
    signed = log_checkpoint_make(fixture=case.fixture, reason=LogCheckpoint.Reason.FULL_TIME)
    path = tmp_path / "case.zip"
    path.write_bytes(case_bundle_export(case=case, by=match_day.cast["police"]).read())
    with zipfile.ZipFile(path) as zf:
        carried = json.loads(zf.read("checkpoints.json"))
        log = json.loads(zf.read("log.json"))
        (tmp_path / "checkpoints.json").write_bytes(zf.read("checkpoints.json"))
    assert [c["statement"]["head"] for c in carried["checkpoints"]][-1] == signed.head
    entries = LogEntry.objects.filter(fixture=case.fixture).count()
    assert log["chain_check"]["anchored"] == signed.entries == entries
    assert log["chain_check"]["problems"] == []

    # The bundle's copy is one verify-log reads: the club's log checks against it.
    copy = tmp_path / "checkpoints.json"
    call_command("verify_log", match=case.fixture.pk, checkpoints=[copy])
    assert f"{entries} entries, chain intact" in capsys.readouterr().out
