// routescope-fuzz-seeds OUT_DIR [SOURCE_DIR]: writes the seed corpus of every fuzz target
// (fuzz/, docs/reliability.md) into OUT_DIR/<target>/: small valid inputs made with the product's
// own writers (DumpWriter, write_checkpoint, RunConfig, train_sentencepiece), so that the seeds
// follow the formats as they change. The importers' seeds come from
// tests/io/make_import_fixtures.py (scripts/fuzz.sh runs it); SOURCE_DIR adds
// resources/configs/*.json to the configuration seeds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/data/sentencepiece_tokenizer.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/dump_writer.hpp"
#include "engine/models/model.hpp"

using namespace routescope;
namespace fs = std::filesystem;

namespace {

fs::path out_dir;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
    const fs::path dir = out_dir / target;
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A dump with every optional part (full) or the least DUMP_FORMAT.md allows; float16 and Birdie's
// reset mask and reverse_from in the second variant.
void write_dump(const fs::path& path, bool full, bool birdie) {
    const int S = 3, L = 8, d = 4, layers = 2;
    DumpSpec spec;
    spec.arch = birdie ? "birdie" : "bigs";
    spec.name = "fuzz seed";
    spec.producer = "routescope-fuzz-seeds";
    spec.n_layers = layers;
    spec.d_model = d;
    spec.examples = S;
    spec.length = L;
    spec.layers = full ? std::vector<int>{0, 1, 2} : std::vector<int>{2};
    spec.config_json = R"({"model": {"arch": "bigs", "d_model": 4}})";
    if (full) {
        spec.sentence = true;
        spec.gates = {"u_f", "u_b"};
        spec.gate_channels = d;
        spec.gate_channels_of = {{"u_b", 2}};
        spec.labels = spec.predictions = spec.text = true;
        spec.attributes = {"gap"};
        spec.vocab = {"[PAD]", "[UNK]", "[CLS]", "[MASK]", "the", "model", "routes"};
        spec.float16 = birdie;
        spec.reset_mask = birdie;
        if (birdie) spec.reverse_from = {{1, 1}, {2, 1}};
    }
    DumpWriter w(path.string(), spec);
    std::vector<float> h(L * d), sentence(d), gate(L * d);
    for (int s = 0; s < S; ++s) {
        ExampleRecord r;
        r.length = 3 + s;
        r.tokens.assign(L, 0);
        for (int t = 0; t < r.length; ++t)
            r.tokens[t] = 4 + (t + s) % 3;
        r.text = "the model routes";
        r.label = s % 2;
        r.prediction = 1 - s % 2;
        if (full) r.attributes = {double(s)};
        w.write_example(s, r);
        if (spec.reset_mask) {
            std::vector<std::int8_t> mask(L, 0);
            mask[0] = 1;
            for (int t = 2; t < r.length; ++t)
                mask[t] = 2;
            w.write_reset_mask(s, mask.data());
        }
        for (int l : spec.layers) {
            for (int i = 0; i < L * d; ++i)
                h[i] = std::sin(0.1f * i + s + l);
            w.write_hidden(l, s, h.data());
            if (spec.sentence) w.write_sentence(l, s, sentence.data());
            if (l == 0) continue;
            for (const auto& g : spec.gates) {
                for (int i = 0; i < L * d; ++i)
                    gate[i] = 0.5f + 0.4f * std::cos(0.2f * i + l);
                w.write_gate(l, g, s, gate.data());
            }
        }
    }
    if (full) {
        for (int l = 1; l <= layers; ++l) {
            w.write_kernel(l, std::vector<float>(L, 0.5f), std::vector<float>(L, 0.25f), 1.0, 0.5);
            // Two kernels per SSM (/kernels/<l>/<direction>_groups), row 0 the kernel above.
            std::vector<float> groups(2 * L, 0.5f);
            std::fill(groups.begin() + L, groups.end(), -0.125f);
            w.write_kernel_groups(l, true, groups, 2, {1.0, 0.75});
            w.write_kernel_groups(l, false, groups, 2, {0.5, 0.25});
        }
        const std::vector<float> mix(4, 0.25f);
        w.write_mixing(1, mix.data(), 2);
    }
    w.finish();
}

RunConfig tiny_config(const std::string& arch) {
    return RunConfig::from_json({{"model",
                                  {{"arch", arch},
                                   {"vocab_size", 40},
                                   {"d_model", 8},
                                   {"n_layers", 1},
                                   {"max_len", 8},
                                   {"n_heads", 2},
                                   {"n_labels", 2},
                                   {"ssm", {{"n_modes", 4}}}}}});
}

const char* const kWordPieceVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ngate\n##d\nmodel\nroute\n##s\ntoken\n,\n.\n!\n%\n"
    "un\n##aff\n##able\n12\n5\n東\n京\nnaive\n";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: routescope-fuzz-seeds OUT_DIR [SOURCE_DIR]\n";
        return 2;
    }
    out_dir = argv[1];
    const fs::path source = argc > 2 ? fs::path(argv[2]) : fs::path();
    fs::create_directories(out_dir);
    const fs::path scratch = out_dir / ".scratch";
    fs::create_directories(scratch);

    // ---- dumps
    for (auto [name, full, birdie] :
         {std::tuple{"full.dump.h5", true, false}, std::tuple{"birdie-f16.dump.h5", true, true},
          std::tuple{"minimal.dump.h5", false, false}}) {
        write_dump(scratch / name, full, birdie);
        const std::string bytes = slurp(scratch / name);
        put("fuzz_dump_validator", name, bytes);
        put("fuzz_dump_reader", name, bytes);
        for (const char* entry : {"fuzz_inspect_entry", "fuzz_analyze_entry", "fuzz_loader_entry"})
            put(entry, name, bytes);  // the product's entry points (issue 25)
    }

    // ---- checkpoints: with train state and a byte tokenizer; a WordPiece tokenizer, no train
    // state
    {
        const RunConfig config = tiny_config("bigs");
        models::Model model(config, 1, 8);
        model.init(1);
        TrainState st;
        st.step = 3;
        st.tokens_seen = 100;
        st.data_position = 2;
        st.rng_state = {1, 2, 3};
        st.adam_m.assign(model.params().size(), 0.01f);
        st.adam_v.assign(model.params().size(), 1e-6f);
        write_checkpoint((scratch / "bigs.ckpt.h5").string(), config, model.params(), {"bytes", {}},
                         &st);
        put("fuzz_checkpoint", "bigs.ckpt.h5", slurp(scratch / "bigs.ckpt.h5"));
        put("fuzz_inspect_entry", "bigs.ckpt.h5", slurp(scratch / "bigs.ckpt.h5"));
    }
    for (const char* arch : {"gated_att", "slstm"}) {
        const RunConfig config = tiny_config(arch);
        models::Model model(config, 1, 8);
        model.init(2);
        const std::string vocab = kWordPieceVocab;
        const std::string name = std::string(arch) + ".ckpt.h5";
        write_checkpoint((scratch / name).string(), config, model.params(),
                         {"wordpiece", std::vector<std::uint8_t>(vocab.begin(), vocab.end())});
        put("fuzz_checkpoint", name, slurp(scratch / name));
        put("fuzz_inspect_entry", name, slurp(scratch / name));
    }

    // ---- run configuration and --set
    put("fuzz_run_config", "default.json", RunConfig{}.to_json_text());
    put("fuzz_run_config", "tiny.json", tiny_config("bigs").to_json_text());
    put("fuzz_run_config", "partial.json",
        R"({"model": {"arch": "birdie"}, "train": {"steps": 0}})");
    if (!source.empty() && fs::is_directory(source / "resources/configs"))
        for (const auto& e : fs::directory_iterator(source / "resources/configs"))
            if (e.path().extension() == ".json")
                put("fuzz_run_config", e.path().filename().string(), slurp(e.path()));
    {
        const nlohmann::json flat = nlohmann::json::parse(RunConfig{}.to_json_text()).flatten();
        std::string lines;
        int n = 0, file = 0;
        for (auto it = flat.begin(); it != flat.end(); ++it) {
            std::string key = it.key().substr(1);
            for (auto& c : key)
                if (c == '/') c = '.';
            lines += key + "=" + (it->is_string() ? it->get<std::string>() : it->dump()) + "\n";
            if (++n % 3 == 0) {
                put("fuzz_config_override", "set-" + std::to_string(file++), lines);
                lines.clear();
            }
        }
        if (!lines.empty()) put("fuzz_config_override", "set-" + std::to_string(file++), lines);
        put("fuzz_config_override", "arch",
            "model.arch=birdie\nmodel.ssm.n_modes=32\ntrain.steps=0\n");
    }

    // ---- classification (first byte: bit 0 TSV, bit 1 require labels)
    put("fuzz_classification", "single.tsv",
        std::string("\x03") + "sentence\tlabel\nthe model routes\t1\ngates open\t0\n");
    put("fuzz_classification", "pairs.tsv",
        std::string("\x03") +
            "idx\tsentence1\tsentence2\tlabel\n0\ta b\tc d\tentailment\n1\te\tf\tneutral\n");
    put("fuzz_classification", "single.jsonl",
        std::string("\x02") +
            "{\"text\": \"the model\", \"label\": 1}\n{\"text\": \"routes\", \"label\": 10}\n");
    put("fuzz_classification", "pairs.jsonl",
        std::string("\x00", 1) +
            "{\"text_a\": \"a\", \"text_b\": \"b\", \"label\": \"yes\"}\n{\"text_a\": \"c\", "
            "\"text_b\": \"d\"}\n");

    // GLUE's own headers (QNLI's question + sentence, MNLI's gold_label beside the votes, MRPC's
    // "#1 String") and Hugging Face datasets' JSON Lines names.
    put("fuzz_classification", "qnli.tsv",
        std::string("\x03") + "index\tquestion\tsentence\tlabel\n0\tWhy?\tBecause.\tentailment\n");
    put("fuzz_classification", "mnli.tsv",
        std::string("\x03") +
            "index\tsentence1\tsentence2\tlabel1\tgold_label\n0\ta\tb\tneutral\t-\n1\tc\td\t"
            "neutral\tneutral\n");
    put("fuzz_classification", "mrpc.tsv",
        std::string("\x03") + "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta\tb\n");
    put("fuzz_classification", "qnli.csv",
        std::string("\x06") +
            "question,sentence,label,idx\r\n\"Why, \"\"so\"\"?\",\"Because\nof "
            "it.\",entailment,0\r\n"
            "q2,s2,not_entailment,1\r\n");
    put("fuzz_classification", "hf.jsonl",
        std::string("\x02") +
            "{\"premise\": \"p\", \"hypothesis\": \"h\", \"label\": -1, \"idx\": 0}\n"
            "{\"premise\": \"q\", \"hypothesis\": \"i\", \"label\": -1, \"idx\": 1}\n");

    // ---- a sharded checkpoint's index (fuzz_import_sharded's folder holds the two shards)
    put("fuzz_import_sharded", "index.json",
        "{\"metadata\": {\"total_size\": 14}, \"weight_map\": {\"a\": "
        "\"model-00001-of-00002.safetensors\", \"b\": \"model-00002-of-00002.safetensors\"}}");
    put("fuzz_import_sharded", "escape.json",
        "{\"weight_map\": {\"a\": \"../model-00001-of-00002.safetensors\"}}");

    // ---- text corpora (first byte: bit 0 blank-line documents, bit 1 JSON Lines)
    put("fuzz_text_corpus", "c4.jsonl",
        std::string("\x02") +
            "{\"text\": \"one\\ntwo \\u00e9\", \"timestamp\": \"2019-04-25T12:57:54Z\", \"url\": "
            "\"https://example.com\"}\n\n{\"text\": \"  \"}\n{\"meta\": {}, \"text\": "
            "\"three\"}\n");
    put("fuzz_text_corpus", "lines.txt",
        std::string("\x00", 1) + "the model routes tokens\n\nsecond document\r\nthird 東京\n");
    // WikiExtractor's outputs (a .txt name: the format comes from the first line).
    put("fuzz_text_corpus", "wiki_00",
        std::string("\x00", 1) +
            "<doc id=\"12\" url=\"https://en.wikipedia.org/wiki?curid=12\" title=\"A\">\nA\n\n"
            "A is a letter.\n</doc>\n<doc id=\"13\" title=\"B\">\n</doc>\n");
    put("fuzz_text_corpus", "wiki_00_json",
        std::string("\x01") +
            "{\"id\": \"12\", \"url\": \"u\", \"title\": \"A\", \"text\": \"A\\n\\nA is a "
            "letter.\"}\n{\"id\": \"13\", \"text\": \"\"}\n");
    put("fuzz_text_corpus", "blank.txt",
        std::string("\x01") +
            "\xEF\xBB\xBF"
            "first line\nstill first\n\n\nsecond\n");

    // ---- tokenizers
    put("fuzz_wordpiece", "vocab.txt", kWordPieceVocab);
    put("fuzz_wordpiece", "vocab-text",
        std::string(kWordPieceVocab) + '\0' + "The gated model routes 12.5% tokens!");
    {
        const fs::path corpus_path = scratch / "corpus.txt";
        std::ofstream corpus_out(corpus_path);
        const char* lines[] = {"the gated model routes long sequences quickly",
                               "a state space layer forgets slowly over long gaps",
                               "the attention baseline matches sentences in every layer",
                               "kernels decay while gates open and close"};
        for (int i = 0; i < 40; ++i)
            corpus_out << lines[i % 4] << " " << i << "\n";
        corpus_out.close();
        for (const char* type : {"unigram", "bpe"}) {
            data::TextCorpus corpus(corpus_path.string());
            auto t = data::train_sentencepiece(corpus, {.vocab_size = 50, .model_type = type});
            const auto bytes = t->serialize();
            put("fuzz_sentencepiece", std::string(type) + ".model",
                std::string(bytes.begin(), bytes.end()));
        }
    }

    // ---- project files
    put("fuzz_project_file", "project.rsproj",
        R"({"format": "routescope-project", "version": 1, "files": ["a.dump.h5", "/abs/b.ckpt.h5"],
            "runs": ["runs/bigs"], "current": 1,
            "views": [{"kind": "kernels", "inputs": ["a.dump.h5"], "settings": {"layer": 2, "dumps": ["a.dump.h5"]}},
                      {"kind": "training", "inputs": ["runs/bigs"], "settings": {}}]})");
    put("fuzz_project_file", "empty.rsproj", R"({"format": "routescope-project", "version": 1})");

    fs::remove_all(scratch);
    std::cout << "routescope-fuzz-seeds: wrote the seed corpora under " << out_dir << "\n";
    return 0;
}
