"""What every layer of sentforge may use: atomic writes (`io.py`), the output rules of every writing command
(`output_guard.py`), finished runs' disk use (`disk.py`), the error classes (`errors.py`), seeding
(`seed.py`), device strings (`device.py`), the data-parallel process group (`distributed.py`), a model's
identity in outputs (`identity.py`) and the k best scores of each row (`top_k.py`)."""
