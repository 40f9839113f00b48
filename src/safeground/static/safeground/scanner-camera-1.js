// The turnstile scanner's camera: reads ticket barcodes (QR and Code 128) from the rear camera.
//
//   import { startCamera } from "./scanner-camera-1.js";
//   const stop = await startCamera(videoElement, (barcode) => { ... }, { zxing: zxingUrl });
//   stop();  // releases the camera
//
// The browser's own BarcodeDetector is used where it reads both formats (Chrome on Android,
// for example); elsewhere the vendored ZXing library, loaded only then, from `zxing`: the URL of
// vendor/zxing-library-0.23.0.min.js as the page resolves it ({% static %}: a hashed name in
// production). A page that works offline must cache that same URL.
//
// A barcode is reported once while it stays in view, and again only after it has been out of
// view for 2 s: one ticket held to the lens is one scan, a ticket shown again is a new scan.
//
// startCamera rejects with an Error whose message a steward can act on and whose `code` is one of
// "insecure_page", "camera_refused", "no_camera", "camera_busy", "camera_failed",
// "reader_unavailable", and `detail` (the browser's name for what failed, or ""): a page in
// another language words it from the code.

const SAME_BARCODE_QUIET_MS = 2_000;
// About ten reads a second: a queue moves faster than that, and a phone's battery lasts.
const READ_EVERY_MS = 100;
const NATIVE_FORMATS = ["qr_code", "code_128"];

function cameraError(code, message, detail = "") {
  const error = new Error(message);
  error.code = code;
  error.detail = detail; // what the browser said, for a page that words the error itself
  return error;
}

function fromMediaError(error) {
  switch (error.name) {
    case "NotAllowedError":
    case "SecurityError":
      return cameraError(
        "camera_refused",
        "Camera access is blocked for this page. Allow the camera in the browser's site settings, then try again.",
      );
    case "NotFoundError":
    case "OverconstrainedError":
      return cameraError("no_camera", "No camera was found on this device.");
    case "NotReadableError":
    case "AbortError":
      return cameraError(
        "camera_busy",
        "The camera could not start: another app may be using it. Close other camera apps and try again.",
      );
    default:
      return cameraError("camera_failed", `The camera could not start (${error.name || error}).`, error.name || String(error));
  }
}

async function nativeReader() {
  if (!("BarcodeDetector" in globalThis)) return null;
  const supported = await globalThis.BarcodeDetector.getSupportedFormats();
  if (!NATIVE_FORMATS.every((format) => supported.includes(format))) return null;
  const detector = new globalThis.BarcodeDetector({ formats: NATIVE_FORMATS });
  return async (video) => (await detector.detect(video)).map((barcode) => barcode.rawValue);
}

let zxingLoading = null;

async function zxingReader(url) {
  if (!url) throw new Error("startCamera was not given the ZXing library's URL");
  // The UMD build, imported as a module, defines globalThis.ZXing.
  zxingLoading ??= import(url).then(() => globalThis.ZXing);
  const ZXing = await zxingLoading;
  const reader = new ZXing.MultiFormatReader();
  reader.setHints(
    new Map([
      [ZXing.DecodeHintType.POSSIBLE_FORMATS, [ZXing.BarcodeFormat.QR_CODE, ZXing.BarcodeFormat.CODE_128]],
    ]),
  );
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  return async (video) => {
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    context.drawImage(video, 0, 0);
    const bitmap = new ZXing.BinaryBitmap(
      new ZXing.HybridBinarizer(new ZXing.HTMLCanvasElementLuminanceSource(canvas)),
    );
    try {
      return [reader.decodeWithState(bitmap).getText()];
    } catch (error) {
      // No barcode in this frame, or one too blurred to trust: the next frame may do.
      if (
        error instanceof ZXing.NotFoundException ||
        error instanceof ZXing.ChecksumException ||
        error instanceof ZXing.FormatException
      ) {
        return [];
      }
      throw error;
    }
  };
}

async function barcodeReader(zxing) {
  try {
    return (await nativeReader()) ?? (await zxingReader(zxing));
  } catch (error) {
    console.error(error);
    throw cameraError(
      "reader_unavailable",
      "The barcode reader could not be loaded. Reload the page while online, then try again.",
    );
  }
}

export async function startCamera(video, onBarcode, { zxing } = {}) {
  if (!navigator.mediaDevices?.getUserMedia) {
    throw cameraError(
      "insecure_page",
      "The camera only works on a secure page. Open the scanner from its https:// address.",
    );
  }
  const reading = barcodeReader(zxing); // loads while the camera starts
  reading.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: "environment", width: { ideal: 1280 }, height: { ideal: 720 } },
    });
  } catch (error) {
    throw fromMediaError(error);
  }
  const release = () => stream.getTracks().forEach((track) => track.stop());

  let read;
  try {
    read = await reading;
  } catch (error) {
    release();
    throw error;
  }
  video.muted = true; // a muted inline video may play without a tap
  video.playsInline = true;
  video.srcObject = stream;
  try {
    await video.play();
  } catch (error) {
    release();
    video.srcObject = null;
    throw cameraError("camera_failed", `The camera picture could not be shown (${error.name}).`, error.name);
  }

  let stopped = false;
  let timer = null;
  const lastSeen = new Map(); // barcode -> when it was last in view

  function report(barcode, now) {
    const last = lastSeen.get(barcode);
    lastSeen.set(barcode, now);
    if (last !== undefined && now - last <= SAME_BARCODE_QUIET_MS) return;
    try {
      onBarcode(barcode);
    } catch (error) {
      reportError(error); // the page's mistake must not stop the scanning
    }
  }

  async function readFrame() {
    if (video.readyState >= video.HAVE_CURRENT_DATA && video.videoWidth > 0) {
      let barcodes = [];
      try {
        barcodes = await read(video);
      } catch (error) {
        console.warn("barcode reader failed on a frame", error);
      }
      const now = performance.now();
      for (const barcode of barcodes) {
        if (stopped) return;
        if (barcode) report(barcode, now);
      }
      for (const [barcode, seen] of lastSeen) {
        if (now - seen > SAME_BARCODE_QUIET_MS) lastSeen.delete(barcode);
      }
    }
    if (!stopped) timer = setTimeout(readFrame, READ_EVERY_MS);
  }
  readFrame();

  return function stop() {
    stopped = true;
    clearTimeout(timer);
    release();
    video.pause();
    video.srcObject = null;
  };
}
