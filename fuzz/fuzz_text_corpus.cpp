// Plain-text corpora (engine/data/text_corpus). Input: first byte picks the document separator
// (bit 0: blank / line) and the file's name (bit 1: *.jsonl, JSON Lines records; else *.txt); the
// rest is the corpus file (whose first line may make a .txt file JSON Lines or WikiExtractor's
// <doc> format). Reads every document, then seeks back.
#include "engine/data/text_corpus.hpp"
#include "fuzz/common.hpp"

using namespace routescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto sep = (data[0] & 1) ? data::DocSeparator::Blank : data::DocSeparator::Line;
    const std::string& path =
        fuzz::write_temp(data + 1, size - 1, (data[0] & 2) ? ".jsonl" : ".txt");
    fuzz::run_reader("TextCorpus", [&] {
        data::TextCorpus corpus(path, sep);
        const auto docs = corpus.read_all();
        if (static_cast<std::int64_t>(docs.size()) != corpus.size()) std::abort();
        corpus.seek(corpus.size() / 2);
        std::string doc;
        while (corpus.next(doc)) {
        }
    });
    return 0;
}
