"""Influential users: the seed's motivating example (Dehghanzadeh et al.,
ICWE 2015, section 3.1): users mentioned often in a sliding window whose
follower counts, held by a remote SPARQL endpoint that changes while the
stream runs, are high. See README.md."""
