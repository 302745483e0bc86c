#pragma once
// The in-memory cache of analysis results (issue 5): a result is keyed by (the fingerprints of its
// input files, the analysis, its parameters), so reopening a view, switching a setting back or
// exporting a figure that is already on screen does not read a multi-GB dump again, and a rewritten
// dump (new fingerprint) is never answered from a stale entry.
//
// Results are shared, immutable (shared_ptr<const T>) and evicted least-recently-used beyond
// `capacity` entries. Two threads asking for the same key at once compute it once: the second waits
// for the first. A computation that throws is not cached; every waiter gets the exception.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "analysis/file_fingerprint.hpp"

namespace routescope::analysis {

class ResultCache {
public:
    explicit ResultCache(std::size_t capacity = 64) : capacity_(capacity) {}
    ResultCache(const ResultCache&) = delete;
    ResultCache& operator=(const ResultCache&) = delete;

    /// The process-wide cache the workbench's views share.
    static ResultCache& shared();

    /// "<analysis>\n<hash>…\n<parameters as canonical JSON>" — nlohmann::json objects keep their
    /// keys sorted, so equal parameters give equal keys whatever order they were set in.
    static std::string key(const std::string& analysis,
                           const std::vector<std::string>& input_hashes,
                           const nlohmann::json& parameters);

    /// The cached result of `key`, or compute() run now (outside the cache's lock) and kept.
    template <class T>
    std::shared_ptr<const T> get_or_compute(const std::string& key,
                                            const std::function<T()>& compute) {
        auto erased = lookup_or_run(key, std::type_index(typeid(T)), [&compute] {
            return std::shared_ptr<const void>(std::make_shared<const T>(compute()));
        });
        return std::static_pointer_cast<const T>(erased);
    }

    std::int64_t hits() const;
    std::int64_t misses() const;
    std::size_t size() const;
    std::size_t capacity() const { return capacity_; }
    void clear();

private:
    using Erased = std::shared_ptr<const void>;
    struct Entry {
        std::type_index type;
        std::shared_future<Erased> value;
        std::list<std::string>::iterator recency;
    };
    Erased lookup_or_run(const std::string& key, std::type_index type,
                         const std::function<Erased()>& compute);
    void evict_locked();

    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;
    std::list<std::string> recency_;  ///< most recently used first
    std::int64_t hits_ = 0, misses_ = 0;
};

}  // namespace routescope::analysis
