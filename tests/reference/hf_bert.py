"""Hugging Face BERT as published, for the importer's parity tests (tests/io/test_importers.cpp).

The implementation lives in the Python package (python/routescope/bert.py, docs/python.md), so the
module that loads an exported BERT and the oracle of the importer's tests are one implementation;
this shim keeps `import hf_bert` working for tests/io/*.py.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from routescope.bert import *  # noqa: E402,F401,F403
from routescope.bert import act_fn, randomize  # noqa: E402,F401
