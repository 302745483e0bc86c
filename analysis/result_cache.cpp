#include "analysis/result_cache.hpp"

#include "engine/core/error.hpp"

namespace routescope::analysis {

ResultCache& ResultCache::shared() {
    static ResultCache cache;
    return cache;
}

std::string ResultCache::key(const std::string& analysis,
                             const std::vector<std::string>& input_hashes,
                             const nlohmann::json& parameters) {
    std::string out = analysis;
    for (const auto& h : input_hashes)
        out += "\n" + h;
    out += "\n" + parameters.dump();
    return out;
}

ResultCache::Erased ResultCache::lookup_or_run(const std::string& key, std::type_index type,
                                               const std::function<Erased()>& compute) {
    std::promise<Erased> promise;
    {
        std::unique_lock lock(mutex_);
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            if (it->second.type != type)
                throw Error("result cache: the key '" + key.substr(0, key.find('\n')) +
                            "' holds a result of another type");
            ++hits_;
            recency_.splice(recency_.begin(), recency_, it->second.recency);
            auto value = it->second.value;
            lock.unlock();
            return value.get();  // waits when another thread is still computing it
        }
        ++misses_;
        recency_.push_front(key);
        entries_.emplace(key, Entry{type, promise.get_future().share(), recency_.begin()});
        evict_locked();
    }
    try {
        Erased value = compute();
        promise.set_value(value);
        return value;
    } catch (...) {
        promise.set_exception(std::current_exception());
        std::lock_guard lock(mutex_);
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            recency_.erase(it->second.recency);
            entries_.erase(it);
        }
        throw;
    }
}

void ResultCache::evict_locked() {
    while (entries_.size() > capacity_ && !recency_.empty()) {
        // An entry still being computed stays reachable through its waiters' shared_future.
        entries_.erase(recency_.back());
        recency_.pop_back();
    }
}

std::int64_t ResultCache::hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
}

std::int64_t ResultCache::misses() const {
    std::lock_guard lock(mutex_);
    return misses_;
}

std::size_t ResultCache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void ResultCache::clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    recency_.clear();
}

}  // namespace routescope::analysis
