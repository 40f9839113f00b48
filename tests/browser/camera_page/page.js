// The smallest page that uses the scanner's camera module, for tests/browser/test_scanner_camera.py
// (served by the test on the application's origin, never by the application).
import { startCamera } from "/static/safeground/scanner-camera-1.js";

const video = document.querySelector("[data-camera]");
const scans = document.querySelector("[data-scans]");
window.scans = [];
try {
  window.stopCamera = await startCamera(
    video,
    (barcode) => {
      window.scans.push({ barcode, at: performance.now() });
      const item = document.createElement("li");
      item.textContent = barcode;
      scans.append(item);
    },
    { zxing: "/static/vendor/zxing-library-0.23.0.min.js" },
  );
  document.body.dataset.scanning = "on";
} catch (error) {
  window.cameraError = { code: error.code, message: error.message };
  document.querySelector("[data-camera-error]").textContent = error.message;
}
