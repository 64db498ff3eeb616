// Writes the reference fixtures of package tokenizer:
//
//   ../gpt2_reference.json  GPT-2 ids of ../texts.json by gpt-3-encoder
//   ../hf_reference.json    ids and decoded text of ../texts.json by
//                           @huggingface/tokenizers (the tokenizer code of
//                           transformers.js) for tokenizer.json files that
//                           package tokenizer saved
//
// Run: npm ci && node gen.mjs   (no network needed after npm ci)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Tokenizer } from "@huggingface/tokenizers";

const require = createRequire(import.meta.url);
const gpt3 = require("gpt-3-encoder");
const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.resolve(here, "..");
const repo = path.resolve(testdata, "../..");

const { texts } = JSON.parse(fs.readFileSync(path.join(testdata, "texts.json"), "utf8"));

const gpt2 = texts.map((text) => ({ text, ids: gpt3.encode(text) }));
fs.writeFileSync(path.join(testdata, "gpt2_reference.json"),
  JSON.stringify({ generator: "gpt-3-encoder@1.1.4", cases: gpt2 }, null, 0) + "\n");

// tokenizer.json files written by package tokenizer (paths relative to the repo).
const files = [
  "models/tokenizers/neuro-bpe-1k.json",
  "models/tokenizers/neuro-bpe-2k.json",
  "models/tokenizers/neuro-bpe-4k.json",
  "tokenizer/testdata/saved/added_tokens.json",
];
const hf = { generator: "@huggingface/tokenizers@0.2.0", tokenizers: {} };
for (const f of files) {
  const p = path.join(repo, f);
  if (!fs.existsSync(p)) {
    console.error(`skipping ${f}: not found`);
    continue;
  }
  const tok = new Tokenizer(JSON.parse(fs.readFileSync(p, "utf8")), {});
  hf.tokenizers[f] = texts.map((text) => {
    const ids = tok.encode(text, { add_special_tokens: false }).ids;
    return { text, ids, decoded: ids.length ? tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : "" };
  });
}
fs.writeFileSync(path.join(testdata, "hf_reference.json"), JSON.stringify(hf, null, 0) + "\n");
console.log(`wrote ${gpt2.length} GPT-2 cases and ${Object.keys(hf.tokenizers).length} tokenizer.json files`);
