"""The state_dict key sets of the published classes, written down from reading their code (not from
the engine), so the importer's fixtures hold exactly what a real checkpoint holds.

BiGS (github.com/jxiw/BiGS, BiGS/modeling_bigs.py, the PyTorch port):
  BiGSEmbeddings   word_embeddings [V, H], position_embeddings [P, H], token_type_embeddings [T, H],
                   LayerNorm (weight, bias) [H]; the persistent buffer position_ids [1, P] (int64,
                   0..P-1); token_type_ids is registered persistent=False, so it is never saved.
  BiGSLayer        LayerNorm [H]; fs4 and bs4 (S4dLayer): D [1] and kernel (S4DKernel):
                   C [N, 2], log_step [1], A_re [N], A_im [N]; dense layers dv [I, H],
                   du_forward, du_backward, duc_forward, duc_backward [H, H], dol [I, H],
                   do [H, I], each with a bias.
  BiGSModel        embeddings, encoder.layer.{i}, and pooler.dense [H, H] + bias: the pooler is
                   created whatever add_pooling_layer says (it only decides whether forward calls
                   it), so BiGSForMaskedLM's state_dict holds bigs.pooler.dense.* too.
  BiGSForMaskedLM  bigs.* and cls.predictions: transform.dense [H, H], transform.LayerNorm [H],
                   bias [V], decoder.weight [V, H] (tied to the word embeddings) and decoder.bias
                   (the same Parameter as predictions.bias): torch.save repeats both.
  BiGSForSequenceClassification  bigs.* (pooler used) and classifier [n_labels, H] + bias.

The Flax port (BiGS/modeling_flax_bigs.py) creates parameters lazily, when a module is called:
  FlaxBiGSForMaskedLM       s4_bert/{embeddings,encoder}/... and cls/predictions/{transform, bias};
                            no pooler (add_pooling_layer=False) and no decoder kernel (the word
                            embeddings are applied through decoder.apply when tied).
  FlaxBiGSForPreTraining    the same plus s4_bert/pooler/dense/{kernel [H, H], bias [H]} and
                            cls/seq_relationship/{kernel [H, 2], bias [2]} (Dense kernels are
                            [in, out]).
"""
import collections


def bigs_for_masked_lm(V, H, I, N, P, T, layers):
    """name -> shape of BiGSForMaskedLM.state_dict() (position_ids is int64, the rest float)."""
    k = collections.OrderedDict()
    e = "bigs.embeddings."
    k[e + "position_ids"] = (1, P)
    k[e + "word_embeddings.weight"] = (V, H)
    k[e + "position_embeddings.weight"] = (P, H)
    k[e + "token_type_embeddings.weight"] = (T, H)
    k[e + "LayerNorm.weight"], k[e + "LayerNorm.bias"] = (H,), (H,)
    for i in range(layers):
        s = f"bigs.encoder.layer.{i}."
        k[s + "LayerNorm.weight"], k[s + "LayerNorm.bias"] = (H,), (H,)
        for ssm in ("fs4", "bs4"):
            k[s + ssm + ".D"] = (1,)
            k[s + ssm + ".kernel.C"] = (N, 2)
            k[s + ssm + ".kernel.log_step"] = (1,)
            k[s + ssm + ".kernel.A_re"] = (N,)
            k[s + ssm + ".kernel.A_im"] = (N,)
        for name, shape in (("dv", (I, H)), ("du_forward", (H, H)), ("du_backward", (H, H)),
                            ("duc_forward", (H, H)), ("duc_backward", (H, H)), ("dol", (I, H)),
                            ("do", (H, I))):
            k[s + name + ".weight"], k[s + name + ".bias"] = shape, (shape[0],)
    k["bigs.pooler.dense.weight"], k["bigs.pooler.dense.bias"] = (H, H), (H,)
    c = "cls.predictions."
    k[c + "bias"] = (V,)
    k[c + "transform.dense.weight"], k[c + "transform.dense.bias"] = (H, H), (H,)
    k[c + "transform.LayerNorm.weight"], k[c + "transform.LayerNorm.bias"] = (H,), (H,)
    k[c + "decoder.weight"], k[c + "decoder.bias"] = (V, H), (V,)
    return k


def bigs_for_sequence_classification(V, H, I, N, P, T, layers, labels):
    k = collections.OrderedDict((n, s) for n, s in
                                bigs_for_masked_lm(V, H, I, N, P, T, layers).items()
                                if not n.startswith("cls."))
    k["classifier.weight"], k["classifier.bias"] = (labels, H), (labels,)
    return k


def flax_bigs_pretraining_extra(H):
    """What FlaxBiGSForPreTraining holds beyond FlaxBiGSForMaskedLM: name -> shape."""
    return collections.OrderedDict([
        ("s4_bert/pooler/dense/kernel", (H, H)), ("s4_bert/pooler/dense/bias", (H,)),
        ("cls/seq_relationship/kernel", (H, 2)), ("cls/seq_relationship/bias", (2,))])
