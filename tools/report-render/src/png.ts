import { crc32, deflateSync } from 'node:zlib';
import { GLYPH_ADVANCE, GLYPH_HEIGHT, glyph } from './font';
import type { Scene } from './scene';

const rgb = (hex: string): [number, number, number] => {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  return [parseInt(full.slice(0, 2), 16), parseInt(full.slice(2, 4), 16), parseInt(full.slice(4, 6), 16)];
};

/** Rasterises a scene (rectangles, 1-px lines, filled circles, bitmap text) into RGB pixels. */
export const rasterize = (scene: Scene): Uint8Array => {
  const { width, height } = scene;
  const px = new Uint8Array(width * height * 3);
  const put = (x: number, y: number, c: [number, number, number]) => {
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (xi < 0 || yi < 0 || xi >= width || yi >= height) return;
    px.set(c, (yi * width + xi) * 3);
  };
  const fill = (x: number, y: number, w: number, h: number, c: [number, number, number]) => {
    for (let j = Math.max(0, Math.round(y)); j < Math.min(height, Math.round(y + h)); j++)
      for (let i = Math.max(0, Math.round(x)); i < Math.min(width, Math.round(x + w)); i++)
        px.set(c, (j * width + i) * 3);
  };
  fill(0, 0, width, height, rgb(scene.background));
  for (const s of scene.shapes) {
    switch (s.kind) {
      case 'rect':
        fill(s.x, s.y, s.w, s.h, rgb(s.fill));
        break;
      case 'line': {
        const c = rgb(s.stroke);
        const steps = Math.max(Math.abs(s.x2 - s.x1), Math.abs(s.y2 - s.y1), 1);
        for (let k = 0; k <= steps; k++)
          put(s.x1 + ((s.x2 - s.x1) * k) / steps, s.y1 + ((s.y2 - s.y1) * k) / steps, c);
        break;
      }
      case 'circle': {
        const c = rgb(s.fill);
        for (let j = -s.r; j <= s.r; j++)
          for (let i = -s.r; i <= s.r; i++) if (i * i + j * j <= s.r * s.r) put(s.cx + i, s.cy + j, c);
        break;
      }
      case 'text': {
        const c = rgb(s.fill);
        const w = s.text.length * GLYPH_ADVANCE * s.scale;
        const x0 = s.anchor === 'start' ? s.x : s.anchor === 'middle' ? s.x - w / 2 : s.x - w;
        [...s.text].forEach((ch, n) => {
          const rows = glyph(ch);
          for (let r = 0; r < GLYPH_HEIGHT; r++)
            for (let col = 0; col < 5; col++)
              if (rows[r]![col] === '1')
                fill(x0 + (n * GLYPH_ADVANCE + col) * s.scale, s.y + r * s.scale, s.scale, s.scale, c);
        });
        break;
      }
      default: {
        const never: never = s;
        return never;
      }
    }
  }
  return px;
};

const chunk = (type: string, data: Uint8Array): Buffer => {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(data).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)) >>> 0, 8 + data.length);
  return out;
};

/** A PNG (8-bit RGB, no filtering, zlib from node:zlib) of the scene. */
export const toPng = (scene: Scene): Buffer => {
  const { width, height } = scene;
  const pixels = rasterize(scene);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0;
    Buffer.from(pixels.buffer, pixels.byteOffset + y * width * 3, width * 3).copy(
      raw,
      y * (width * 3 + 1) + 1,
    );
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
};
