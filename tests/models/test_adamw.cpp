// AdamW and its schedule as docs/config.md defines them, checked against closed forms computed here
// (the PyTorch parity test checks the same optimizer against torch.optim.AdamW on real models).
#include <QtTest>

#include "engine/backend/cpu/cpu_backend.hpp"

#include <cmath>
#include <numbers>

#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"
#include "engine/models/model.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/lr_schedule.hpp"

using namespace routescope;
using train::ParamGroup;

namespace {
// The optimizer group a model declares for parameter `name` (ParamEntry::group), looked up in the
// layouts of a BiGS, a BERT and a Birdie model of 8 layers with a classifier.
routescope::ParamGroup declared_group(const std::string& name) {
    for (const char* arch : {"bigs", "bert", "birdie"}) {
        nlohmann::json model = {{"arch", arch}, {"d_model", 16},    {"n_layers", 8},
                                {"max_len", 8}, {"vocab_size", 20}, {"n_labels", 2}};
        if (std::string(arch) == "bert") model["n_heads"] = 2;
        const auto config = routescope::RunConfig::from_json({{"model", model}});
        for (const auto& e : routescope::models::Model::parameter_layout(config.model))
            if (e.name == name) return e.group;
    }
    throw std::runtime_error("no model declares " + name);
}
}  // namespace

class TestAdamW : public QObject {
    Q_OBJECT
    routescope::CpuBackend cpu_{routescope::ThreadPool::serial()};
private slots:
    void parameterGroupsFollowDocsConfig() {
        QCOMPARE(declared_group("layers.0.dv.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("mlm.dense.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("classifier.out.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("layers.3.attn.q.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("layers.0.dv.bias"), ParamGroup::no_decay);
        QCOMPARE(declared_group("mlm.bias"), ParamGroup::no_decay);
        QCOMPARE(declared_group("layers.1.norm2.weight"), ParamGroup::no_decay);
        QCOMPARE(declared_group("mlm.norm.weight"), ParamGroup::no_decay);
        QCOMPARE(declared_group("embeddings.word.weight"), ParamGroup::no_decay);
        QCOMPARE(declared_group("embeddings.norm.weight"), ParamGroup::no_decay);
        QCOMPARE(declared_group("layers.0.ssm_forward.A_re"), ParamGroup::ssm);
        // Birdie's forget gate takes no weight decay; its other projections do.
        QCOMPARE(declared_group("layers.3.w_f.weight"), ParamGroup::no_decay);
        QCOMPARE(declared_group("layers.3.w_i.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("layers.3.w_out.weight"), ParamGroup::decay);
        QCOMPARE(declared_group("layers.7.ssm_backward.log_step"), ParamGroup::ssm);
    }

    void scheduleWarmsUpLinearlyThenDecays() {
        TrainConfig t;
        t.warmup_steps = 4;
        t.steps = 14;
        t.schedule = "cosine";
        QCOMPARE(train::lr_factor(0, t), 0.25);
        QCOMPARE(train::lr_factor(3, t), 1.0);
        QCOMPARE(train::lr_factor(4, t), 1.0);                    // t = 0
        QVERIFY(std::abs(train::lr_factor(9, t) - 0.5) < 1e-15);  // t = ½: ½(1 + cos π/2)
        QCOMPARE(train::lr_factor(14, t), 0.0);
        QCOMPARE(train::lr_factor(100, t), 0.0);  // clamped past train.steps
        t.schedule = "linear";
        QCOMPARE(train::lr_factor(6, t), 0.8);
        t.schedule = "constant";
        QCOMPARE(train::lr_factor(13, t), 1.0);
        t.warmup_steps = 0;
        t.schedule = "cosine";
        QCOMPARE(train::lr_factor(0, t), 1.0);
    }

    void oneStepMatchesTheClosedForm() {
        // One parameter per group; after the first update, m̂ = g and v̂ = g², so
        // p₁ = p₀(1 − lr·wd) − lr·g/(|g| + ε)  (Loshchilov & Hutter's AdamW with bias correction).
        ParamStore store;
        // The groups are declared with the parameters (as declare_linear / declare_ssm do).
        store.add("layers.0.dv.weight", {1}, ParamInit::normal, ParamGroup::decay);
        store.add("layers.0.dv.bias", {1}, ParamInit::zeros, ParamGroup::no_decay);
        store.add("layers.0.ssm_forward.D", {1}, ParamInit::ssm_part, ParamGroup::ssm);
        store.allocate(cpu_);  // the CPU backend: its memory is host memory
        for (int i = 0; i < 3; ++i) {
            store.data()[i] = 0.5f;
            store.grad_data()[i] = -0.2f;
        }
        TrainConfig t;
        t.lr = 0.1;
        t.ssm_lr = 0.01;
        t.weight_decay = 0.5;
        t.warmup_steps = 0;
        t.schedule = "constant";
        t.eps = 1e-8;
        train::AdamW opt(t, store);
        QCOMPARE(opt.update(store), 0.1);
        const double step = 0.2 / (0.2 + 1e-8);
        QVERIFY(std::abs(store.data()[0] - (0.5 * (1 - 0.1 * 0.5) + 0.1 * step)) < 1e-7);
        QVERIFY(std::abs(store.data()[1] - (0.5 + 0.1 * step)) < 1e-7);   // no decay on a bias
        QVERIFY(std::abs(store.data()[2] - (0.5 + 0.01 * step)) < 1e-7);  // ssm_lr, no decay
        QVERIFY(std::abs(opt.m()[0] - 0.1 * -0.2) < 1e-8);                // (1 − β1)·g
        QVERIFY(std::abs(opt.v()[0] - 0.001 * 0.04) < 1e-10);             // (1 − β2)·g²
        QCOMPARE(opt.step(), std::int64_t(1));
    }

    void clipScalesToTheMaximumNorm() {
        ParamStore store;
        store.add("a.weight", {2});
        store.allocate(cpu_);  // the CPU backend: its memory is host memory
        store.grad_data()[0] = 3;
        store.grad_data()[1] = 4;  // ‖g‖ = 5
        TrainConfig t;
        t.clip_grad_norm = 1.0;
        train::AdamW opt(t, store);
        QCOMPARE(opt.clip(store), 5.0);
        const double coef = 1.0 / (5.0 + 1e-6);  // torch.nn.utils.clip_grad_norm_
        QCOMPARE(store.grad_data()[0], float(3 * coef));
        QCOMPARE(store.grad_data()[1], float(4 * coef));
        t.clip_grad_norm = 0;  // off
        train::AdamW off(t, store);
        store.grad_data()[0] = 30;
        QCOMPARE(off.clip(store),
                 std::sqrt(900.0 + double(store.grad_data()[1]) * store.grad_data()[1]));
        QCOMPARE(store.grad_data()[0], 30.0f);
    }
};

QTEST_GUILESS_MAIN(TestAdamW)
#include "test_adamw.moc"
