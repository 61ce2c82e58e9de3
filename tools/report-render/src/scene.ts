/** A plot as plain shapes, drawn by both the SVG writer and the PNG rasteriser. Pixels, origin top left. */
export type Shape =
  | {
      readonly kind: 'rect';
      readonly x: number;
      readonly y: number;
      readonly w: number;
      readonly h: number;
      readonly fill: string;
    }
  | {
      readonly kind: 'line';
      readonly x1: number;
      readonly y1: number;
      readonly x2: number;
      readonly y2: number;
      readonly stroke: string;
    }
  | {
      readonly kind: 'circle';
      readonly cx: number;
      readonly cy: number;
      readonly r: number;
      readonly fill: string;
    }
  | {
      readonly kind: 'text';
      readonly x: number;
      /** Baseline-free: the top of the text. */
      readonly y: number;
      readonly text: string;
      /** Font pixel scale: 1 = 7 px tall glyphs. */
      readonly scale: number;
      readonly fill: string;
      readonly anchor: 'start' | 'middle' | 'end';
    };

export interface Scene {
  readonly width: number;
  readonly height: number;
  readonly background: string;
  readonly shapes: readonly Shape[];
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The scene as an SVG document (monospace text sized like the bitmap font). */
export const toSvg = (scene: Scene): string => {
  const parts = scene.shapes.map((s) => {
    switch (s.kind) {
      case 'rect':
        return `<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" fill="${s.fill}"/>`;
      case 'line':
        return `<line x1="${s.x1}" y1="${s.y1}" x2="${s.x2}" y2="${s.y2}" stroke="${s.stroke}" stroke-width="1"/>`;
      case 'circle':
        return `<circle cx="${s.cx}" cy="${s.cy}" r="${s.r}" fill="${s.fill}"/>`;
      case 'text':
        return `<text x="${s.x}" y="${s.y + 7 * s.scale}" font-family="DejaVu Sans Mono, monospace" font-size="${
          9 * s.scale
        }" fill="${s.fill}" text-anchor="${s.anchor}">${escape(s.text)}</text>`;
      default: {
        const never: never = s;
        return never;
      }
    }
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${scene.width}" height="${scene.height}" viewBox="0 0 ${scene.width} ${scene.height}">`,
    `<rect width="100%" height="100%" fill="${scene.background}"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
};
