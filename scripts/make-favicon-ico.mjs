// Writes public/favicon.ico: the jobdeck mark (public/favicon.svg — a gradient tile with a
// square hole) drawn at 16×16 and 32×32 as 32-bit BMPs inside an ICO container, for browsers
// and tools that ask for /favicon.ico. No dependencies. Run: node scripts/make-favicon-ico.mjs
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FROM = [0x34, 0x51, 0xd1]; // #3451d1 (the dashboard's accent)
const TO = [0x8b, 0x5c, 0xf6]; // #8b5cf6

/** True when (x, y) lies in the rounded rectangle [x0, x1) × [y0, y1) with corner radius r. */
function inRounded(x, y, x0, y0, x1, y1, r) {
  if (x < x0 || x >= x1 || y < y0 || y >= y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

/** RGBA pixels (top row first) of the mark at size × size, 4×4 supersampled. */
function draw(size) {
  const s = size / 32; // geometry of favicon.svg's 32-unit box
  const px = new Uint8Array(size * size * 4);
  const n = 4;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let r = 0, g = 0, b = 0, a = 0;
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const u = x + (sx + 0.5) / n;
          const v = y + (sy + 0.5) / n;
          if (!inRounded(u, v, 0, 0, size, size, 8.5 * s)) continue;
          const t = (u + v) / (2 * size);
          let c = FROM.map((f, i) => f + (TO[i] - f) * t);
          if (inRounded(u, v, 9 * s, 9 * s, 23 * s, 23 * s, 3 * s)) c = c.map((ch) => ch + (255 - ch) * 0.92);
          r += c[0]; g += c[1]; b += c[2]; a += 1;
        }
      }
      const o = (y * size + x) * 4;
      const cov = a / (n * n);
      px[o] = a ? Math.round(r / a) : 0;
      px[o + 1] = a ? Math.round(g / a) : 0;
      px[o + 2] = a ? Math.round(b / a) : 0;
      px[o + 3] = Math.round(cov * 255);
    }
  }
  return px;
}

/** One ICO image: BITMAPINFOHEADER (height doubled: XOR + AND masks), BGRA rows bottom-up, AND mask. */
function bmp(size) {
  const rgba = draw(size);
  const maskRow = Math.ceil(size / 32) * 4;
  const buf = Buffer.alloc(40 + size * size * 4 + maskRow * size);
  buf.writeUInt32LE(40, 0);
  buf.writeInt32LE(size, 4);
  buf.writeInt32LE(size * 2, 8);
  buf.writeUInt16LE(1, 12);
  buf.writeUInt16LE(32, 14);
  buf.writeUInt32LE(0, 16); // BI_RGB
  buf.writeUInt32LE(size * size * 4 + maskRow * size, 20);
  let o = 40;
  for (let y = size - 1; y >= 0; y--) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4;
      buf[o++] = rgba[i + 2];
      buf[o++] = rgba[i + 1];
      buf[o++] = rgba[i];
      buf[o++] = rgba[i + 3];
    }
  }
  // AND mask all zero: the alpha channel decides transparency.
  return buf;
}

const images = [16, 32].map((size) => ({ size, data: bmp(size) }));
const header = Buffer.alloc(6 + 16 * images.length);
header.writeUInt16LE(0, 0);
header.writeUInt16LE(1, 2); // icon
header.writeUInt16LE(images.length, 4);
let offset = header.length;
images.forEach((img, k) => {
  const e = 6 + 16 * k;
  header[e] = img.size;
  header[e + 1] = img.size;
  header[e + 2] = 0; // no palette
  header[e + 3] = 0;
  header.writeUInt16LE(1, e + 4); // planes
  header.writeUInt16LE(32, e + 6); // bits per pixel
  header.writeUInt32LE(img.data.length, e + 8);
  header.writeUInt32LE(offset, e + 12);
  offset += img.data.length;
});
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'public', 'favicon.ico');
writeFileSync(out, Buffer.concat([header, ...images.map((i) => i.data)]));
console.log(`wrote ${out} (${offset} bytes)`);
