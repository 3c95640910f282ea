"""Text classification on sentence vectors: a logistic-regression head (`head.py`) on an encoder
(`classifier.py`: `SentenceClassifier`, saved as a sentence-transformers directory plus the head in
safetensors), and predictions for a file (`predict.py`)."""
