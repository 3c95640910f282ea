"""What an encoder offers its users around the forward pass: the keywords `encode` accepts in sentforge's and
sentence-transformers' spelling (`encode_options.py`), compute precisions (`dtypes.py`), the
sentence-transformers methods mixed into `Encoder` (`st_methods.py`), int8/binary output
(`quantization.py`) and the model card written on every save (`model_card.py`)."""
