import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { rasterize, type Scene, toPng, toSvg } from '../src';

const scene: Scene = {
  width: 40,
  height: 20,
  background: '#fff',
  shapes: [
    { kind: 'rect', x: 0, y: 0, w: 4, h: 4, fill: '#ff0000' },
    { kind: 'line', x1: 0, y1: 19, x2: 39, y2: 19, stroke: '#00ff00' },
    { kind: 'circle', cx: 30, cy: 5, r: 2, fill: '#0000ff' },
    { kind: 'text', x: 10, y: 8, text: 'A<&', scale: 1, fill: '#222222', anchor: 'start' },
  ],
};

const pixelAt = (pixels: Uint8Array, x: number, y: number) => {
  const at = (y * scene.width + x) * 3;
  return [...pixels.subarray(at, at + 3)];
};

describe('rasterize', () => {
  it('fills the background and draws every kind of shape', () => {
    const pixels = rasterize(scene);
    expect(pixels.length).toBe(scene.width * scene.height * 3);
    expect(pixelAt(pixels, 39, 0)).toEqual([255, 255, 255]);
    expect(pixelAt(pixels, 1, 1)).toEqual([255, 0, 0]);
    expect(pixelAt(pixels, 20, 19)).toEqual([0, 255, 0]);
    expect(pixelAt(pixels, 30, 5)).toEqual([0, 0, 255]);
    // The top row of the bitmap font's A is 01110: ink from the second column on.
    expect(pixelAt(pixels, 10, 8)).toEqual([255, 255, 255]);
    expect(pixelAt(pixels, 11, 8)).toEqual([0x22, 0x22, 0x22]);
  });
});

describe('toPng', () => {
  it('is an 8-bit RGB PNG whose image data is the rasterised scene, row by row', () => {
    const png = toPng(scene);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.toString('latin1', 12, 16)).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(scene.width);
    expect(png.readUInt32BE(20)).toBe(scene.height);
    expect([png[24], png[25]]).toEqual([8, 2]);
    const idatLength = png.readUInt32BE(33);
    expect(png.toString('latin1', 37, 41)).toBe('IDAT');
    const raw = inflateSync(png.subarray(41, 41 + idatLength));
    const stride = scene.width * 3 + 1;
    expect(raw.length).toBe(stride * scene.height);
    const pixels = rasterize(scene);
    for (let y = 0; y < scene.height; y++) {
      expect(raw[y * stride]).toBe(0);
      expect(
        raw
          .subarray(y * stride + 1, (y + 1) * stride)
          .equals(pixels.subarray(y * (stride - 1), (y + 1) * (stride - 1))),
      ).toBe(true);
    }
    expect(png.toString('latin1', png.length - 8, png.length - 4)).toBe('IEND');
  });
});

describe('toSvg', () => {
  it('draws one element per shape on the background, with the text escaped', () => {
    const svg = toSvg(scene);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"')).toBe(true);
    expect(svg).toContain('<rect width="100%" height="100%" fill="#fff"/>');
    expect(svg).toContain('<rect x="0" y="0" width="4" height="4" fill="#ff0000"/>');
    expect(svg).toContain('<line x1="0" y1="19" x2="39" y2="19" stroke="#00ff00" stroke-width="1"/>');
    expect(svg).toContain('<circle cx="30" cy="5" r="2" fill="#0000ff"/>');
    expect(svg).toContain('text-anchor="start">A&lt;&amp;</text>');
  });
});
