"""Streamlit UI helpers of the empathy app (imports streamlit; business logic stays in ``empathy``)."""
