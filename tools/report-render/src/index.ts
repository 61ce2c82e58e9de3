export { rasterize, toPng } from './png';
export { type Scene, type Shape, toSvg } from './scene';
