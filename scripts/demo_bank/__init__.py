"""The hand-written banks ``scripts/make_demo.py`` composes the demo data set from.

* ``handwritten/``: the 25 hand-written items of the first demo (121 outputs and their author ratings), kept
  verbatim in the generated data set;
* :mod:`demo_bank.words`: the feeling words a client narrative plants, with the author's anchored affect level
  of each and the words each fictional model puts in their place;
* :mod:`demo_bank.clients`: the counseling clients (one situation each, in nine scenario classes);
* :mod:`demo_bank.frames`: the sentence frames narratives and replies are composed from, per model tendency.

Everything here is original text written for the demo; the people, places and events are fictional.
"""
