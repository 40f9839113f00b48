"""The turnstile scanner's camera module (static/safeground/scanner-camera-1.js) in Debian's
Chromium, fed camera footage made here: a ticket's QR code or Code 128 barcode is reported once
while held to the lens and again when shown again; stop() releases the camera; a refused or
missing camera is an error a steward can act on.

The footage is a Y4M file Chromium plays as its camera, so each video needs a browser of its own
(`camera_browser`); the shared `browser` has no camera at all. The test page lives in
camera_page/ and is served on the application's origin, under the application's CSP, by
intercepting its address: the application has no test page of its own.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.csp import build_policy
from playwright.sync_api import Browser, BrowserContext, Page, Route

from .barcode_video import Scene, code128_modules, qr_modules, write_video
from .conftest import CHROMIUM_ARGS

pytestmark = pytest.mark.browser

PAGE_DIR = Path(__file__).parent / "camera_page"
VENDOR_ZXING = "vendor/zxing-library-0.23.0.min.js"
# Printable ASCII, punctuation and a space included, as ticketing systems print them.
QR_TICKET = "WHU17-CHE/E 0417:a~b"
CODE128_TICKET = "WHU-1026 b7/x"

BrowserWithVideo = Callable[..., Browser]


@pytest.fixture
def camera_browser(browser: Browser, tmp_path: Path) -> Iterator[BrowserWithVideo]:
    """A Chromium whose camera plays the given scenes (or, with refuse=True, a camera the user
    refuses), closed after the test."""
    launched: list[Browser] = []

    def launch(scenes: list[Scene] | None = None, *, refuse: bool = False) -> Browser:
        args = [*CHROMIUM_ARGS, "--use-fake-device-for-media-stream"]
        args.append("--use-fake-ui-for-media-stream" + ("=deny" if refuse else ""))
        if scenes is not None:
            video = write_video(tmp_path / f"camera-{len(launched)}.y4m", scenes)
            args.append(f"--use-file-for-fake-video-capture={video}")
        chromium = browser.browser_type.launch(
            executable_path="/usr/bin/chromium", headless=True, args=args
        )
        launched.append(chromium)
        return chromium

    yield launch
    for chromium in launched:
        chromium.close()


@dataclass
class CameraPage:
    page: Page
    requested: list[str]  # every URL the page asked for

    def fetched(self, static_path: str) -> bool:
        return any(url.endswith(f"/static/{static_path}") for url in self.requested)


@pytest.fixture
def open_camera_page(server: str) -> Iterator[Callable[..., CameraPage]]:
    """The test page at origin (the server's own by default) in a new context of the given
    browser; its module and the vendored reader come from the real server."""
    contexts: list[BrowserContext] = []
    csp = build_policy(settings.SECURE_CSP)

    def open_page(
        chromium: Browser, origin: str = server, init_scripts: tuple[str, ...] = ()
    ) -> CameraPage:
        context = chromium.new_context()
        contexts.append(context)
        for script in init_scripts:
            context.add_init_script(script=script)
        page = context.new_page()
        page.set_default_timeout(10_000)
        opened = CameraPage(page, [])
        page.on("request", lambda request: opened.requested.append(request.url))

        def serve(route: Route) -> None:
            path = route.request.url.removeprefix(origin)
            if path.startswith("/camera-test/"):
                name = path.removeprefix("/camera-test/") or "index.html"
                route.fulfill(
                    body=(PAGE_DIR / name).read_bytes(),
                    content_type="text/html" if name.endswith(".html") else "text/javascript",
                    headers={"Content-Security-Policy": csp},
                )
            elif origin != server:
                route.fulfill(response=route.fetch(url=server + path))
            else:
                route.continue_()

        page.route(f"{origin}/**", serve)
        page.goto(f"{origin}/camera-test/")
        return opened

    yield open_page
    for context in contexts:
        context.close()


def wait_for_scans(page: Page, count: int, timeout: float = 10_000) -> list[dict]:
    page.wait_for_function(
        "n => window.cameraError || window.scans.length >= n", arg=count, timeout=timeout
    )
    assert page.evaluate("window.cameraError") is None
    return page.evaluate("window.scans")


@pytest.mark.parametrize(
    ("ticket", "modules", "module_px"),
    [
        (QR_TICKET, qr_modules(QR_TICKET), 6),
        (CODE128_TICKET, code128_modules(CODE128_TICKET), 2),
    ],
    ids=["qr", "code128"],
)
def test_a_ticket_held_to_the_lens_is_one_scan(
    camera_browser, open_camera_page, ticket, modules, module_px
):
    # One second of footage, looped: the ticket stays in view.
    chromium = camera_browser([Scene(seconds=1, modules=modules, module_px=module_px)])
    camera = open_camera_page(chromium)
    page = camera.page

    scans = wait_for_scans(page, 1)
    assert [scan["barcode"] for scan in scans] == [ticket]
    # Linux Chromium has no BarcodeDetector: the vendored library read it.
    assert camera.fetched(VENDOR_ZXING)

    # Still in view past the 2 s in which a repeat is ignored: still one scan.
    page.wait_for_timeout(2_500)
    assert page.locator("[data-scans] li").all_inner_texts() == [ticket]


def test_a_ticket_shown_again_after_a_pause_is_scanned_again(camera_browser, open_camera_page):
    # Held for 3 s, taken away for 2.5 s, shown again (Chromium loops the file).
    chromium = camera_browser(
        [Scene(seconds=3, modules=qr_modules(QR_TICKET), module_px=6), Scene(seconds=2.5)]
    )
    page = open_camera_page(chromium).page

    first, second = wait_for_scans(page, 2, timeout=15_000)[:2]

    assert first["barcode"] == second["barcode"] == QR_TICKET
    # Not a repeat while held (that would come 2 s after the first) but after the pause.
    assert second["at"] - first["at"] > 4_000


def test_after_stop_the_camera_is_released_and_nothing_more_is_reported(
    camera_browser, open_camera_page
):
    # An empty card for 2 s, then a ticket: it comes into view only after stop().
    chromium = camera_browser(
        [Scene(seconds=2), Scene(seconds=3, modules=qr_modules(QR_TICKET), module_px=6)]
    )
    page = open_camera_page(chromium).page
    page.wait_for_selector("body[data-scanning=on]")
    page.evaluate("window.tracks = document.querySelector('video').srcObject.getTracks()")
    assert page.evaluate("window.tracks.map(track => track.readyState)") == ["live"]

    page.evaluate("window.stopCamera()")

    assert page.evaluate("window.tracks.map(track => track.readyState)") == ["ended"]
    assert page.evaluate("document.querySelector('video').srcObject") is None
    page.wait_for_timeout(3_500)
    assert page.evaluate("window.scans") == []


# Linux Chromium has no BarcodeDetector, Android's has: a stand-in with the platform's interface
# that reads the real frames with ZXing, recording how the module used it.
STAND_IN_DETECTOR = """
globalThis.standIn = { formats: null, detected: 0 };
globalThis.BarcodeDetector = class {
  static async getSupportedFormats() { return SUPPORTED; }
  constructor({ formats }) {
    standIn.formats = formats;
    this.reader = new ZXing.MultiFormatReader();
    this.reader.setHints(new Map());
    this.canvas = document.createElement("canvas");
  }
  async detect(video) {
    this.canvas.width = video.videoWidth;
    this.canvas.height = video.videoHeight;
    this.canvas.getContext("2d").drawImage(video, 0, 0);
    const bitmap = new ZXing.BinaryBitmap(
      new ZXing.HybridBinarizer(new ZXing.HTMLCanvasElementLuminanceSource(this.canvas)));
    try {
      const text = this.reader.decodeWithState(bitmap).getText();
      standIn.detected += 1;
      return [{ rawValue: text, format: "qr_code", boundingBox: null, cornerPoints: [] }];
    } catch (error) {
      if (error instanceof ZXing.NotFoundException) return [];
      throw error;
    }
  }
};
"""


@pytest.mark.parametrize(
    ("supported", "native_used"),
    [(["aztec", "code_128", "ean_13", "qr_code"], True), (["ean_13", "qr_code"], False)],
    ids=["native-reads-both", "native-lacks-code128"],
)
def test_the_browser_s_own_detector_is_preferred_when_it_reads_both_formats(
    camera_browser, open_camera_page, supported, native_used
):
    zxing = (Path(settings.STATICFILES_DIRS[0]) / VENDOR_ZXING).read_text()
    chromium = camera_browser([Scene(seconds=1, modules=qr_modules(QR_TICKET), module_px=6)])
    camera = open_camera_page(
        chromium, init_scripts=(zxing, STAND_IN_DETECTOR.replace("SUPPORTED", repr(supported)))
    )

    assert [scan["barcode"] for scan in wait_for_scans(camera.page, 1)] == [QR_TICKET]
    stand_in = camera.page.evaluate("standIn")
    if native_used:
        assert stand_in["formats"] == ["qr_code", "code_128"]
        assert stand_in["detected"] >= 1
        assert not camera.fetched(VENDOR_ZXING)
    else:
        assert stand_in == {"formats": None, "detected": 0}
        assert camera.fetched(VENDOR_ZXING)


@pytest.mark.parametrize(
    ("case", "code", "message"),
    [
        ("refused", "camera_refused", "Camera access is blocked for this page."),
        ("no camera", "no_camera", "No camera was found on this device."),
        ("not https", "insecure_page", "The camera only works on a secure page."),
    ],
    ids=["refused", "no-camera", "not-https"],
)
def test_a_camera_that_cannot_start_is_explained(
    browser, camera_browser, open_camera_page, case, code, message
):
    # The shared browser has no camera device at all; "not https" is a plain-http host name.
    chromium = camera_browser(refuse=True) if case == "refused" else browser
    if case == "not https":
        page = open_camera_page(chromium, origin="http://scanner.ground.example").page
    else:
        page = open_camera_page(chromium).page

    page.wait_for_function("() => window.cameraError")
    assert page.evaluate("window.cameraError.code") == code
    assert page.locator("[data-camera-error]").inner_text().startswith(message)
    assert page.evaluate("document.body.dataset.scanning") is None
