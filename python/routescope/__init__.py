"""Routescope's exported models in PyTorch (docs/python.md).

`routescope-cli export CKPT --to safetensors|pytorch --out DIR` writes DIR/config.json, vocab.txt
and model.safetensors or pytorch_model.bin under the published names (the official BiGS PyTorch
port's for `bigs`, Hugging Face BERT's for a post-LN `bert`). This package holds nn.Modules with
exactly those parameter names and the engine's semantics, and a loader:

    import routescope
    model = routescope.load("DIR")                 # eval mode, float32
    logits = model(input_ids, attention_mask, token_type_ids)

Pure Python (torch, numpy); safetensors is parsed by hand, pytorch_model.bin is read with
torch.load(weights_only=True): nothing in a file is executed. A file load cannot trust (a config
that does not match the weights, tied tensors that differ, a FIFO, a malformed header ...) is a
LoadError naming the file (docs/python.md, "What load refuses").
"""
from . import safetensors
from .bert import BertForMaskedLM, BertForSequenceClassification
from .bigs import BigsForMaskedLM, BigsForSequenceClassification
from .loading import LoadError, check_config, load, load_config, load_state_dict, model_class

__all__ = ["BertForMaskedLM", "BertForSequenceClassification", "BigsForMaskedLM",
           "BigsForSequenceClassification", "LoadError", "check_config", "load", "load_config",
           "load_state_dict", "model_class", "safetensors"]
