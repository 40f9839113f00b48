"""The evidence locker: SHA-256 on upload, limits with clear errors, CCTV references, storage
through Django's storage API, the chain of custody, and the stewards' photos."""

import hashlib

import pytest
from django.core.files.storage import storages
from django.urls import reverse

from safeground.append_only import AppendOnlyError
from safeground.casework.evidence import EvidenceRefused, evidence_add
from safeground.casework.models import CustodyRecord, Evidence
from safeground.incidents.photos import log_entry_photo_add
from safeground.incidents.services import Place
from tests import factories

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.4\n% a leaflet, scanned\n"


def test_a_file_is_stored_through_the_evidence_storage_with_its_sha256(match_day):
    case = factories.case(match_day.cup_tie)
    evidence = factories.evidence(
        case, kind="document", upload=factories.upload("leaflet.pdf", PDF, "application/pdf")
    )
    assert evidence.sha256 == hashlib.sha256(PDF).hexdigest()
    assert evidence.file.storage is storages["evidence"]
    with evidence.file.open("rb") as f:
        assert f.read() == PDF
    upload = CustodyRecord.objects.get(evidence=evidence)
    assert (upload.action, upload.sha256, upload.username) == (
        "upload",
        evidence.sha256,
        case.opened_by.username,
    )


def test_the_same_name_twice_is_two_files_never_a_replacement(match_day):
    case = factories.case(match_day.cup_tie)
    first = factories.evidence(case, upload=factories.upload("still.png"))
    second = factories.evidence(case, upload=factories.upload("still.png", factories.PNG + b"x"))
    assert first.file.name != second.file.name
    with first.file.open("rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == first.sha256
    first.description = "changed"
    with pytest.raises(AppendOnlyError):
        first.save()


@pytest.mark.parametrize(
    ("kind", "upload", "says"),
    [
        ("photo", ("a.gif", b"GIF89a...", "image/gif"), "image/jpeg, image/png, image/webp"),
        ("photo", ("a.png", b"not a png at all", "image/png"), "contents are not image/png"),
        ("video", ("a.mp4", b"", "video/mp4"), "empty"),
        ("document", ("a.exe", b"MZ\x90\x00", "application/x-msdownload"), "application/pdf"),
        ("photo", None, "choose a file"),
    ],
)
def test_refused_files_say_why_and_nothing_is_stored(match_day, kind, upload, says):
    case = factories.case(match_day.cup_tie)
    with pytest.raises(EvidenceRefused) as refused:
        evidence_add(
            by=case.opened_by,
            fixture=case.fixture,
            case=case,
            kind=kind,
            upload=factories.upload(*upload) if upload else None,
        )
    assert refused.value.field == "file" and says in refused.value.message
    assert not Evidence.objects.exists() and not CustodyRecord.objects.exists()


def test_a_file_over_the_limit_is_refused_with_the_sizes(match_day, settings):
    settings.SAFEGROUND_EVIDENCE_MAX_MB = 1
    case = factories.case(match_day.cup_tie)
    big = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * (1024 * 1024 + 1)
    with pytest.raises(EvidenceRefused) as refused:
        factories.evidence(case, kind="video", upload=factories.upload("cam.mp4", big, "video/mp4"))
    message = refused.value.message
    assert f"{len(big):,} bytes" in message and f"at most 1 MB ({1024 * 1024:,} bytes)" in message


def test_cctv_footage_is_a_reference_with_a_camera_and_times(match_day):
    case = factories.case(match_day.cup_tie)
    footage = factories.evidence(case, kind="cctv")
    assert (footage.file.name, footage.sha256, footage.camera) == ("", "", "CAM 12")
    with pytest.raises(EvidenceRefused) as refused:
        factories.evidence(case, kind="cctv", footage_to=footage.footage_from)
    assert refused.value.field == "footage_to"
    with pytest.raises(EvidenceRefused) as refused:
        factories.evidence(case, kind="cctv", upload=factories.upload())
    assert refused.value.field == "file"


def test_evidence_on_a_log_entry_without_a_case(match_day):
    cup = match_day.cup_tie
    entry = factories.report(cup)
    loose = evidence_add(
        by=match_day.cast["safety"],
        fixture=cup,
        entry=entry,
        kind="screenshot",
        upload=factories.upload("post.png"),
    )
    assert loose.case is None and loose.entry == entry
    other = factories.report(match_day.league_match)
    with pytest.raises(EvidenceRefused):
        evidence_add(
            by=match_day.cast["safety"],
            fixture=cup,
            entry=other,
            kind="photo",
            upload=factories.upload(),
        )


def test_every_view_and_download_is_in_the_chain_of_custody(
    match_day, client_for, no_second_factor
):
    case = factories.case(match_day.cup_tie)
    evidence = factories.evidence(case)
    client = client_for("police")
    url = reverse("evidence_file", args=[evidence.pk])
    assert client.get(url).status_code == 200
    downloaded = client.get(url + "?download=1")
    assert b"".join(downloaded.streaming_content) == factories.PNG
    assert "attachment" in downloaded["Content-Disposition"]
    assert list(
        CustodyRecord.objects.filter(evidence=evidence).values_list("action", "username")
    ) == [("upload", "banofficer"), ("view", "police"), ("download", "police")]
    assert client_for("steward").get(url).status_code == 403
    assert CustodyRecord.objects.filter(evidence=evidence).count() == 3


def test_the_stewards_photos_show_in_the_locker_and_each_view_is_recorded(
    match_day, client_for, no_second_factor
):
    cup = match_day.cup_tie
    entry = factories.report(cup, place=Place(block="S-L2"))
    photo = log_entry_photo_add(
        entry=entry, author=match_day.cast["steward"], upload=factories.upload("phone.png")
    )
    home_only = factories.report(cup, place=Place(block="N-L1"), home_only=True)
    hidden = log_entry_photo_add(
        entry=home_only, author=match_day.cast["loggist"], upload=factories.upload("office.png")
    )
    locker = client_for("safety").get(reverse("evidence_locker", args=[cup.pk]))
    assert locker.status_code == 200
    assert photo.sha256 in locker.text and str(hidden.pk) in locker.text
    # The police see every entry but a home-only one, and so its photo neither.
    police = client_for("police")
    police_locker = police.get(reverse("evidence_locker", args=[cup.pk]))
    assert f'data-photo="{photo.pk}"' in police_locker.text
    assert f'data-photo="{hidden.pk}"' not in police_locker.text
    assert police.get(reverse("evidence_photo", args=[hidden.pk])).status_code == 403
    seen = police.get(reverse("evidence_photo", args=[photo.pk]))
    assert b"".join(seen.streaming_content) == factories.PNG
    record = CustodyRecord.objects.get(photo=photo)
    assert (record.action, record.username, record.sha256) == ("view", "police", photo.sha256)
    assert client_for("steward").get(reverse("evidence_locker", args=[cup.pk])).status_code == 403


def test_evidence_of_a_home_only_entry_stays_with_the_home_club(
    match_day, client_for, no_second_factor
):
    cup = match_day.cup_tie
    private = factories.evidence(
        factories.case(cup, entries=[factories.report(cup, home_only=True)])
    )
    shared = factories.evidence(factories.case(cup))
    police = client_for("police")
    assert police.get(reverse("evidence_file", args=[private.pk])).status_code == 403
    assert police.get(reverse("evidence_file", args=[shared.pk])).status_code == 200
    locker = police.get(reverse("evidence_locker", args=[cup.pk])).text
    assert f'data-evidence-item="{shared.pk}"' in locker
    assert f'data-evidence-item="{private.pk}"' not in locker
    assert client_for("safety").get(reverse("evidence_file", args=[private.pk])).status_code == 200


def test_evidence_on_a_home_only_entry_without_a_case_stays_with_the_home_club(
    match_day, client_for, no_second_factor
):
    cup = match_day.cup_tie
    private = evidence_add(
        by=match_day.cast["safety"], fixture=cup, entry=factories.report(cup, home_only=True),
        kind="photo", upload=factories.upload(),
    )  # fmt: skip
    police = client_for("police")
    assert police.get(reverse("evidence_file", args=[private.pk])).status_code == 403
    locker = police.get(reverse("evidence_locker", args=[cup.pk])).text
    assert f'data-evidence-item="{private.pk}"' not in locker
    assert client_for("safety").get(reverse("evidence_file", args=[private.pk])).status_code == 200
