"""Sentence vectors at scale: a file of any size encoded in resumable chunks (`streaming.py`), by this process
or a Ray cluster (`engines/`); FAISS indexes that keep the identity of the model behind their vectors
(`index.py`); the ONNX/int8 export of an encoder's backbone (`export.py`)."""
