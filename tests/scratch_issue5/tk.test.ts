import { it } from 'vitest';
import { loadHfTokenizer } from '../../src/model/hf_tokenizer.js';
it('x', async () => {
const t = await loadHfTokenizer('/work/main/tests/fixtures/t5/flan-t5', { vocabSize: 48 });
for (const s of ['open the app', 'search for coffee near me', 'Open  THE app!', 'xyzzy.', '']) {
  const ids = t.encodeText(s); console.log(s, ids, JSON.stringify(t.decodeText(ids)));
}
console.log(t.vocabSize, t.padId, t.eosId, t.unkId, t.isTextId(0), t.isTextId(3), t.isTextId(44), JSON.stringify(t.toJSON()).length);
});
