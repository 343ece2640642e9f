"""Reference numbers for the readers, with where each one comes from.

Ranger (Sertkan et al. 2023) example data, ``../shared/data/ranger/SOURCE.md``: the
per-collection mean nDCG@10 of TAS-B (``tasb_dim768_hf``) and ColBERTer
(``colberter_dim1_stopwords``) computed with ir_measures 0.4.3 ``iter_calc`` on the
qrels and the top-10 runs, judged queries only, rounded to 3 decimals there; and the
GLUE dev accuracies of bert-base-cased / distilbert-base-cased (3 decimals).
"""

#: collection -> (tasb, colberter) mean nDCG@10, SOURCE.md "Derived tidy tables".
RANGER_NDCG10 = {
    "trec-covid": (0.494, 0.679),
    "dbpedia-entity": (0.385, 0.416),
    "antique": (0.283, 0.406),
    "nfcorpus": (0.320, 0.328),
    "tripclick": (0.139, 0.148),
    "trec_podcast": (0.295, 0.320),
}
#: judged queries per collection (SOURCE.md: tripclick 1143 judged, trec-podcast 98 judged).
RANGER_JUDGED = {
    "trec-covid": 50,
    "dbpedia-entity": 400,
    "antique": 200,
    "nfcorpus": 323,
    "tripclick": 1143,
    "trec_podcast": 98,
}

#: task -> (bert-base-cased, distilbert-base-cased) accuracy, SOURCE.md.
RANGER_GLUE_ACCURACY = {
    "mnli": (0.838, 0.813),
    "mrpc": (0.846, 0.826),
    "qnli": (0.908, 0.887),
    "qqp": (0.908, 0.897),
    "rte": (0.628, 0.552),
    "sst2": (0.917, 0.904),
    "wnli": (0.451, 0.563),
}
#: task -> number of dev examples (SOURCE.md).
RANGER_GLUE_N = {
    "mnli": 9815,
    "mrpc": 408,
    "qnli": 5463,
    "qqp": 40430,
    "rte": 277,
    "sst2": 872,
    "wnli": 71,
}

#: Closed forms for a one-query run d1 > d2 > d3 with d1, d3 relevant (grade 1), d2 not:
#: AP = (1/1 + 2/3) / 2; P@2 = 1/2; nDCG@3 = (1 + 1/log2(4)) / (1 + 1/log2(3)).
TINY_AP = (1.0 + 2.0 / 3.0) / 2.0
TINY_P2 = 0.5
TINY_NDCG3 = (1.0 + 1.0 / 2.0) / (1.0 + 1.0 / 1.584962500721156)

#: Shapes from ../shared/data/README.md: (topics, systems).
BAYESIAN_RISK_SHAPE = (50, 45)
TREC_ADHOC_SYSTEMS = {"adhoc5": 61, "adhoc6": 74, "adhoc7": 103, "adhoc8": 129}
ROBUST2004_SHAPE = (249, 110)
