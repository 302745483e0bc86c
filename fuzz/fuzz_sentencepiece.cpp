// SentencePiece .model loading (engine/data/sentencepiece_tokenizer; the model is parsed by
// libsentencepiece, which is not instrumented) as a checkpoint's /tokenizer/model. Input: the
// serialized model; the loaded tokenizer encodes and decodes a fixed text and lists its pieces.
#include "engine/data/tokenizer.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string text =
        "The gated model routes tokens without attention. naïve 東京 ▁x";
    fuzz::run_reader("load_tokenizer(sentencepiece)", [&] {
        auto t = data::load_tokenizer("sentencepiece", {data, size});
        const auto ids = t->encode(text);
        (void)t->decode(ids);
        (void)t->specials();
        for (std::int32_t id = 0; id < std::min<std::int32_t>(t->vocab_size(), 64); ++id)
            (void)t->piece(id), (void)t->is_special(id);
        (void)t->vocabulary();
    });
    return 0;
}
