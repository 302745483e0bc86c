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

BERT (github.com/huggingface/transformers, read at two commits because the buffers changed between
them: src/transformers/models/bert/modeling_bert.py at 004ad5f50b627b59bf0d581c31bc0052b6cfd40b,
an older release (file_utils imports, init_weights), and at
8ec58104181bfb34d824d89bccc009b4f6be6e0e, a recent one (post_init, SDPA attention);
src/transformers/models/bert/modeling_flax_bert.py at 003adce08aeaa9c0281a6849df9cf6f7b1914cf0 and
299108c6539343a1293dd7fc69f807afdefaf627, which agree on every parameter name; the safetensors
writer, PreTrainedModel.save_pretrained in src/transformers/modeling_utils.py at
040ba146759afc625c77f49d04982bb54873995f):
  BertEmbeddings   word_embeddings [V, H] (padding_idx = pad_token_id), position_embeddings [P, H],
                   token_type_embeddings [T, H], LayerNorm (weight, bias) [H]. Buffers: position_ids
                   [1, P] (int64, 0..P-1) is persistent at 004ad5f (register_buffer with no
                   persistent argument) and persistent=False at 8ec5810, so only files written by
                   the older releases hold bert.embeddings.position_ids; token_type_ids [1, P] is
                   persistent=False at both (at 004ad5f only registered when torch > 1.6), never
                   saved.
  BertLayer        attention.self.{query, key, value} [H, H] + bias (absolute positions: no
                   distance_embedding), attention.output.dense [H, H] + bias and
                   attention.output.LayerNorm [H], intermediate.dense [I, H] + bias [I],
                   output.dense [H, I] + bias [H], output.LayerNorm [H]; no crossattention unless
                   add_cross_attention (a decoder), which the importer's models never are.
  BertModel        embeddings, encoder.layer.{i}, and pooler.dense [H, H] + bias only when
                   add_pooling_layer (the default); the pooler's activation (tanh) holds nothing.
  BertLMPredictionHead  its own bias [V], transform.dense [H, H] + bias, transform.LayerNorm [H],
                   decoder.weight [V, H] (created bias=False, then decoder.bias is set to the same
                   Parameter as bias; the decoder weight is tied to the word embeddings by
                   tie_weights), so a state_dict repeats both as decoder.weight / decoder.bias.
  BertForMaskedLM  bert = BertModel(add_pooling_layer=False): no pooler; cls.predictions.*.
                   004ad5f lists position_ids and predictions.decoder.bias as ignorable when
                   missing on load and "pooler" as ignorable when unexpected; 8ec5810 declares
                   _tied_weights_keys = [predictions.decoder.bias, cls.predictions.decoder.weight].
  BertForPreTraining  bert = BertModel() (pooler kept), cls.predictions.* as above and
                   cls.seq_relationship [2, H] + bias [2]; the same _tied_weights_keys at 8ec5810.
  BertForSequenceClassification  bert = BertModel() (pooler used) and classifier [n_labels, H] +
                   bias; no cls.
  pytorch_model.bin  torch.save of the state_dict, every tied copy repeated: at 040ba146 the alias
                   removal below runs only when safe_serialization is set (which names
                   huggingface_hub's split_torch_state_dict_into_shards puts in each shard, and
                   004ad5f's save_pretrained, were not read).
  model.safetensors  save_pretrained(safe_serialization=True) at 040ba146 groups the state_dict by
                   storage and, within each group of aliases, deletes the names a
                   _tied_weights_keys pattern finds (re.search), keeping at least one: for BERT's
                   MLM head that drops cls.predictions.decoder.weight (the word embeddings stay)
                   and cls.predictions.decoder.bias (cls.predictions.bias stays).

The Flax port (modeling_flax_bert.py) builds its modules in setup(), so a submodule's parameters
exist only once it is called; FlaxPreTrainedModel.init_weights returns module.init(...)["params"]
and save_pretrained writes to_bytes(params), so flax_model.msgpack's root is {bert, cls,
classifier}. Dense kernels are [in, out]; LayerNorm holds scale and bias; nn.Embed holds
"embedding"; the encoder's layers are named "0", "1", ... under encoder/layer.
  FlaxBertForMaskedLM       bert/{embeddings, encoder} (FlaxBertModule(add_pooling_layer=False):
                            its pooler is set up but never called, so no parameters) and
                            cls/predictions/{transform/dense, transform/LayerNorm, bias [V]}; no
                            decoder kernel while tie_word_embeddings holds (the word embeddings
                            are applied through decoder.apply).
  FlaxBertForPreTraining    the same plus bert/pooler/dense/{kernel [H, H], bias [H]} and
                            cls/seq_relationship/{kernel [H, 2], bias [2]}.
  FlaxBertForSequenceClassification  bert/{embeddings, encoder, pooler} and
                            classifier/{kernel [H, n_labels], bias [n_labels]}.
"""
import collections


def _embeddings(k, e, V, H, P, T, position_ids):
    """The embeddings module's entries under prefix e, in state_dict order (BiGSEmbeddings and
    BertEmbeddings hold the same ones): the int64 position_ids buffer when persisted."""
    if position_ids:
        k[e + "position_ids"] = (1, P)
    k[e + "word_embeddings.weight"] = (V, H)
    k[e + "position_embeddings.weight"] = (P, H)
    k[e + "token_type_embeddings.weight"] = (T, H)
    k[e + "LayerNorm.weight"], k[e + "LayerNorm.bias"] = (H,), (H,)


def _mlm_head(k, V, H):
    """cls.predictions of BiGSForMaskedLM and BertForMaskedLM/BertForPreTraining: the decoder
    weight (tied to the word embeddings) and bias (the same Parameter as predictions.bias)
    repeated."""
    c = "cls.predictions."
    k[c + "bias"] = (V,)
    k[c + "transform.dense.weight"], k[c + "transform.dense.bias"] = (H, H), (H,)
    k[c + "transform.LayerNorm.weight"], k[c + "transform.LayerNorm.bias"] = (H,), (H,)
    k[c + "decoder.weight"], k[c + "decoder.bias"] = (V, H), (V,)


def bigs_for_masked_lm(V, H, I, N, P, T, layers):
    """name -> shape of BiGSForMaskedLM.state_dict() (position_ids is int64, the rest float)."""
    k = collections.OrderedDict()
    _embeddings(k, "bigs.embeddings.", V, H, P, T, position_ids=True)
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
    _mlm_head(k, V, H)
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


# ---------------------------------------------------------------- BERT (transformers)


def _bert_base(k, V, H, I, P, T, layers, position_ids, pooler):
    """BertModel's entries under bert. (PyTorch names), in state_dict order."""
    _embeddings(k, "bert.embeddings.", V, H, P, T, position_ids)
    for i in range(layers):
        s = f"bert.encoder.layer.{i}."
        for name, shape in (("attention.self.query", (H, H)), ("attention.self.key", (H, H)),
                            ("attention.self.value", (H, H)), ("attention.output.dense", (H, H)),
                            ("attention.output.LayerNorm", (H,)), ("intermediate.dense", (I, H)),
                            ("output.dense", (H, I)), ("output.LayerNorm", (H,))):
            k[s + name + ".weight"], k[s + name + ".bias"] = shape, (shape[0],)
    if pooler:
        k["bert.pooler.dense.weight"], k["bert.pooler.dense.bias"] = (H, H), (H,)


def bert_for_masked_lm(V, H, I, P, T, layers, position_ids=True):
    """name -> shape of BertForMaskedLM.state_dict(); position_ids: whether the release persists
    the embeddings' position_ids buffer (004ad5f: yes, int64; 8ec5810: no)."""
    k = collections.OrderedDict()
    _bert_base(k, V, H, I, P, T, layers, position_ids, pooler=False)
    _mlm_head(k, V, H)
    return k


def bert_for_pretraining(V, H, I, P, T, layers, position_ids=True):
    """name -> shape of BertForPreTraining.state_dict(): the pooler and the next-sentence head too."""
    k = collections.OrderedDict()
    _bert_base(k, V, H, I, P, T, layers, position_ids, pooler=True)
    _mlm_head(k, V, H)
    k["cls.seq_relationship.weight"], k["cls.seq_relationship.bias"] = (2, H), (2,)
    return k


def bert_for_sequence_classification(V, H, I, P, T, layers, labels, position_ids=True):
    k = collections.OrderedDict()
    _bert_base(k, V, H, I, P, T, layers, position_ids, pooler=True)
    k["classifier.weight"], k["classifier.bias"] = (labels, H), (labels,)
    return k


# The aliases save_pretrained(safe_serialization=True) leaves out (040ba146, with the patterns of
# BertForMaskedLM's and BertForPreTraining's _tied_weights_keys at 8ec5810: in each alias pair,
# the one name a pattern finds).
BERT_SAFETENSORS_DROPPED = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")


def bert_safetensors(keys):
    """What model.safetensors holds of a state_dict key set: the tied aliases left out."""
    return collections.OrderedDict((n, s) for n, s in keys.items()
                                   if n not in BERT_SAFETENSORS_DROPPED)


def _flax_bert_base(k, V, H, I, P, T, layers, pooler):
    e = "bert/embeddings/"
    k[e + "word_embeddings/embedding"] = (V, H)
    k[e + "position_embeddings/embedding"] = (P, H)
    k[e + "token_type_embeddings/embedding"] = (T, H)
    k[e + "LayerNorm/scale"], k[e + "LayerNorm/bias"] = (H,), (H,)
    for i in range(layers):
        s = f"bert/encoder/layer/{i}/"
        for name, (fin, fout) in (("attention/self/query", (H, H)), ("attention/self/key", (H, H)),
                                  ("attention/self/value", (H, H)),
                                  ("attention/output/dense", (H, H)),
                                  ("intermediate/dense", (H, I)), ("output/dense", (I, H))):
            k[s + name + "/kernel"], k[s + name + "/bias"] = (fin, fout), (fout,)
        for ln in ("attention/output/LayerNorm", "output/LayerNorm"):
            k[s + ln + "/scale"], k[s + ln + "/bias"] = (H,), (H,)
    if pooler:
        k["bert/pooler/dense/kernel"], k["bert/pooler/dense/bias"] = (H, H), (H,)


def _flax_mlm_head(k, V, H):
    c = "cls/predictions/"
    k[c + "transform/dense/kernel"], k[c + "transform/dense/bias"] = (H, H), (H,)
    k[c + "transform/LayerNorm/scale"], k[c + "transform/LayerNorm/bias"] = (H,), (H,)
    k[c + "bias"] = (V,)


def flax_bert_for_masked_lm(V, H, I, P, T, layers):
    """'a/b/c' -> shape of FlaxBertForMaskedLM's params (tied word embeddings: no decoder kernel)."""
    k = collections.OrderedDict()
    _flax_bert_base(k, V, H, I, P, T, layers, pooler=False)
    _flax_mlm_head(k, V, H)
    return k


def flax_bert_for_pretraining(V, H, I, P, T, layers):
    k = collections.OrderedDict()
    _flax_bert_base(k, V, H, I, P, T, layers, pooler=True)
    _flax_mlm_head(k, V, H)
    k["cls/seq_relationship/kernel"], k["cls/seq_relationship/bias"] = (H, 2), (2,)
    return k


def flax_bert_for_sequence_classification(V, H, I, P, T, layers, labels):
    k = collections.OrderedDict()
    _flax_bert_base(k, V, H, I, P, T, layers, pooler=True)
    k["classifier/kernel"], k["classifier/bias"] = (H, labels), (labels,)
    return k
