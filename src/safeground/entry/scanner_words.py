"""The words the scanner page writes from its script (static/safeground/scanner-1.js), in the
steward's language. The reasons' own words are entry/rules.py's (the config's `rules`).

They travel in the page's config, so the page the service worker keeps has them with no
network. `{name}` marks a slot the script fills. The script writes no words of its own.
"""

from django.utils.translation import gettext, pgettext


def scanner_words() -> dict[str, object]:
    return {
        "otherKey": gettext("the ticket list is signed with another key"),
        "badSignature": gettext("the ticket list's signature does not verify: not loaded"),
        "badVersion": gettext("ticket list version {version} is not understood"),
        "noNetworkList": gettext("No network: the ticket list could not be loaded."),
        "keyNotValid": gettext("This key is not valid (unknown or revoked)."),
        "refusedHttp": gettext("refused (HTTP {status})"),
        "listExpired": gettext(
            "The ticket list for {title} expired at {time}: reconnect to the network."
        ),
        "bundle": gettext("Bundle for {title}, valid until {time}, {count} tickets"),
        # The page's heading and tab once a list is loaded: the match and its day (issue 38).
        "heading": gettext("Scanner · {title} ({day})"),
        "today": gettext("today"),
        "exit": pgettext("turnstile decision", "EXIT"),
        "admit": pgettext("turnstile decision", "ADMIT"),
        "deny": pgettext("turnstile decision", "DO NOT ADMIT"),
        "cannotCheck": pgettext("turnstile decision", "CANNOT CHECK"),
        "offlineQueued": gettext("OFFLINE · queued ({count})"),
        "noList": gettext("No ticket list on this scanner: connect to the network to load it."),
        "expiredScan": gettext(
            "The ticket list expired at {time}: reconnect to the network to scan."
        ),
        "notBarcode": gettext(
            "Not a ticket barcode (1 to 64 letters, digits or signs, no spaces). Scan again."
        ),
        "refusedHttpScan": gettext("Refused (HTTP {status})"),
        "queued": gettext("queued ({count})"),
        "usedTwice": gettext("ticket used twice — also admitted by another scanner"),
        "online": pgettext("network state", "online"),
        "offline": pgettext("network state", "OFFLINE"),
        "camera": gettext("Camera"),
        "stopCamera": gettext("Stop camera"),
        # startCamera's errors by their code (scanner-camera-1.js); `{detail}` is the browser's.
        "cameraErrors": {
            "insecure_page": gettext(
                "The camera only works on a secure page. Open the scanner from its https://"
                " address."
            ),
            "camera_refused": gettext(
                "Camera access is blocked for this page. Allow the camera in the browser's site"
                " settings, then try again."
            ),
            "no_camera": gettext("No camera was found on this device."),
            "camera_busy": gettext(
                "The camera could not start: another app may be using it. Close other camera"
                " apps and try again."
            ),
            "camera_failed": gettext("The camera could not start ({detail})."),
            "reader_unavailable": gettext(
                "The barcode reader could not be loaded. Reload the page while online, then try"
                " again."
            ),
        },
    }
