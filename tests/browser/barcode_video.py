"""Camera footage for the browser tests: a ticket barcode on a white card, written as a Y4M video
that Chromium plays as its camera (`--use-file-for-fake-video-capture`; it loops the file).

Y4M is a header line and then, per frame, `FRAME\\n` and the raw YUV 4:2:0 planes: the full-size
luma (Y) plane, then the two quarter-size chroma planes, here all 128 (grey, no colour).
"""

from dataclasses import dataclass
from pathlib import Path

import qrcode
from barcode import Code128

WIDTH, HEIGHT = 640, 480
FRAMES_PER_SECOND = 5  # plenty for a still card, and keeps the files small (460 kB a frame)
WHITE, BLACK = 235, 16  # video ("studio") range luma

Modules = list[list[bool]]  # rows of modules, True = dark


def qr_modules(text: str) -> Modules:
    code = qrcode.QRCode(border=4, error_correction=qrcode.constants.ERROR_CORRECT_M)
    code.add_data(text)
    code.make(fit=True)
    return [list(row) for row in code.get_matrix()]


def code128_modules(text: str, height: int = 60) -> Modules:
    """Code 128 from python-barcode (an encoder independent of the reader under test), with the
    quiet zone of ten modules either side that readers need to find the start."""
    quiet = [False] * 10
    row = quiet + [bit == "1" for bit in Code128(text).build()[0]] + quiet
    return [row] * height


@dataclass(frozen=True)
class Scene:
    """What the camera sees for a while: a barcode (or an empty card when modules is None)."""

    seconds: float
    modules: Modules | None = None
    module_px: int = 4


def _luma(scene: Scene) -> bytes:
    plane = bytearray([WHITE]) * (WIDTH * HEIGHT)
    if scene.modules is None:
        return bytes(plane)
    px = scene.module_px
    rows, columns = len(scene.modules), len(scene.modules[0])
    top, left = (HEIGHT - rows * px) // 2, (WIDTH - columns * px) // 2
    if top < 0 or left < 0:
        raise ValueError(f"{columns}x{rows} modules of {px} px do not fit {WIDTH}x{HEIGHT}")
    for r, row in enumerate(scene.modules):
        line = b"".join(bytes([BLACK if dark else WHITE]) * px for dark in row)
        for y in range(top + r * px, top + (r + 1) * px):
            plane[y * WIDTH + left : y * WIDTH + left + len(line)] = line
    return bytes(plane)


def write_video(path: Path, scenes: list[Scene]) -> Path:
    chroma = bytes([128]) * (2 * (WIDTH // 2) * (HEIGHT // 2))
    with path.open("wb") as video:
        video.write(
            f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F{FRAMES_PER_SECOND}:1 Ip A1:1 C420jpeg\n".encode()
        )
        for scene in scenes:
            frame = b"FRAME\n" + _luma(scene) + chroma
            for _ in range(round(scene.seconds * FRAMES_PER_SECOND)):
                video.write(frame)
    return path
