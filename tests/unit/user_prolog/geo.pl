/*  Geographic background knowledge for tests/unit/test_user_prolog.py: a
    few places of Lombardy and Rome with their coordinates, the great-circle
    distance between two of them, and what counts as near.
*/

%   place(IRI, Latitude, Longitude), in degrees
place('http://example.org/milano',  45.4642,  9.1900).
place('http://example.org/monza',   45.5845,  9.2744).
place('http://example.org/bergamo', 45.6983,  9.6773).
place('http://example.org/roma',    41.9028, 12.4964).

%   distance_km(+A, +B, -Km): the haversine distance between two places
distance_km(A, B, Km) :-
    coordinates(A, Lat1, Lon1),
    coordinates(B, Lat2, Lon2),
    haversine(Lat1, Lon1, Lat2, Lon2, Km).

coordinates(P, Lat, Lon) :-
    atom(P),
    place(P, Lat, Lon).

haversine(Lat1, Lon1, Lat2, Lon2, Km) :-
    R = 6371.0,
    P1 is Lat1 * pi / 180, P2 is Lat2 * pi / 180,
    DP is (Lat2 - Lat1) * pi / 180,
    DL is (Lon2 - Lon1) * pi / 180,
    H is sin(DP / 2) ** 2 + cos(P1) * cos(P2) * sin(DL / 2) ** 2,
    Km is 2 * R * asin(sqrt(H)).

%   near(+A, +B): within 20 km of each other
near(A, B) :-
    distance_km(A, B, Km),
    Km < 20.

%   within_km(+A, +B, +Limit): a test with a number argument
within_km(A, B, Limit) :-
    distance_km(A, B, Km),
    Km =< Limit.

%   a function that raises on anything but a number
double(X, Y) :-
    Y is X * 2.

%   functions whose results have no RDF form, or are booleans and IRIs
pair(X, X-X).
is_big(X, B) :- ( X > 100 -> B = true ; B = false ).
place_of(Name, IRI) :- atom_concat('http://example.org/', Name, IRI).
label(P, Label) :- place(P, _, _), atom_concat('http://example.org/', Name, P), atom_string(Name, Label).

%   the Prolog form of a value, as a string (tests the value mapping)
form(X, S) :- format(string(S), "~q", [X]).

%   how many places the file knows (a file loaded twice would know 8)
places(N) :- aggregate_all(count, place(_, _, _), N).
