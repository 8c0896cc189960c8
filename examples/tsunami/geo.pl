/*  Distances on the Earth for the tsunami rules (examples/tsunami).

    A rule calls it as a SPARQL function of four arguments (docs/language.md,
    "Prolog predicates in FILTER"):

        FILTER(distance_km(?lat, ?long, ?plat, ?plong) < ?radius)

    with latitudes and longitudes in decimal degrees (geo:lat, geo:long of
    ontologies/dart-stations.ttl and ontologies/coastal-places.ttl).
*/
:- module(tsunami_geo, [distance_km/5]).

%!  distance_km(+Lat1, +Lon1, +Lat2, +Lon2, -Km) is det.
%
%   Km is the great-circle distance between two points given in decimal
%   degrees, by the haversine formula on a sphere of the Earth's mean
%   radius (6371.0088 km): within 0.5% of the ellipsoidal distance, which
%   is plenty for "places within some hundred kilometres of a buoy".
%   Raises a type error when an argument is not a number.
distance_km(Lat1, Lon1, Lat2, Lon2, Km) :-
    must_be(number, Lat1), must_be(number, Lon1),
    must_be(number, Lat2), must_be(number, Lon2),
    P1 is Lat1 * pi / 180, P2 is Lat2 * pi / 180,
    DP is P2 - P1,
    DL is (Lon2 - Lon1) * pi / 180,
    A is sin(DP / 2) ** 2 + cos(P1) * cos(P2) * sin(DL / 2) ** 2,
    C is 2 * atan2(sqrt(A), sqrt(max(0.0, 1 - A))),
    Km is 6371.0088 * C.
