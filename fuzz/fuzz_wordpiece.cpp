// WordPiece vocab.txt loading (engine/data/wordpiece_tokenizer) as a checkpoint's /tokenizer/model
// and as a file, uncased and cased. Input: the vocabulary, optionally followed by "\0" and a text
// that the loaded tokenizer encodes and decodes again (a fixed text otherwise).
#include "engine/data/tokenizer.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = fuzz::split_once({reinterpret_cast<const char*>(data), size}, '\0');
    const std::string_view vocab = parts.first;
    std::string_view text = parts.second;
    if (text.empty()) text = "The gated model, unaffable: routes ##tokens [MASK] 12.5% naïve 東京!";
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(vocab.data());
    for (const char* kind : {"wordpiece", "wordpiece_cased"})
        fuzz::run_reader("load_tokenizer(wordpiece)", [&] {
            auto t = data::load_tokenizer(kind, {bytes, vocab.size()});
            const auto ids = t->encode(text);
            (void)t->decode(ids);
            for (std::int32_t id = 0; id < std::min<std::int32_t>(t->vocab_size(), 64); ++id)
                (void)t->piece(id);
            (void)t->serialize();
        });
    const std::string& path = fuzz::write_temp(bytes, vocab.size(), ".vocab.txt");
    fuzz::run_reader("load_tokenizer_file(wordpiece)",
                     [&] { (void)data::load_tokenizer_file("wordpiece", path)->encode(text); });
    return 0;
}
