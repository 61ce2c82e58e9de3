/** The upper-case words of a GPU name: `NVIDIA A100-SXM4-80GB` → `NVIDIA A100 SXM4 80GB`. */
export const modelWords = (name: string): string =>
  name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w !== '')
    .join(' ');

/**
 * Whether `model` (a spec's or a price floor's model) names the GPU `reportedName`: its words appear
 * as a sequence in the reported name's words, as the ensemble spec defines — `A100` and `A100 80GB`
 * match `NVIDIA A100-SXM4-80GB`? `A100` does, `A100 80GB` does not (SXM4 sits between).
 */
export const modelMatches = (reportedName: string, model: string): boolean => {
  const needle = modelWords(model);
  return needle !== '' && ` ${modelWords(reportedName)} `.includes(` ${needle} `);
};
