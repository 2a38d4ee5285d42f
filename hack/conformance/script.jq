(((.spec.containers[0].command // []) + (.spec.containers[0].args // [])) as $a | ([range(0; $a | length) | select($a[.] == "-c")] | first) as $i | if $i == null then "" else ($a[$i + 1] // "") end)
