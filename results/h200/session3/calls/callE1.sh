set -u
export GIT_COMMIT=a31d4c2cf340
O=$OUT/e1; mkdir -p $O
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); timeout $l bash -c "$*" > $O/$n.log 2>&1; echo "$n: status $? in $(( $(date +%s)-t0 ))s" | tee -a $O/summary.txt; }
s build 200 "make -j16 all"
s bench06 90 "./06_tensor_core_wmma/06_tensor_core_wmma --sizes 1024,2048,4096,8192,4096x4096x1024,1000x1013x4097 --csv $O/bench_06_s3.csv"
s test 260 "REQUIRE_GPU=1 make test"
grep -h "^tests:" $O/test.log; grep -E "test cases:" $O/test.log | grep -v " 0 failed" | head
grep -E "4096x4096x4096|8192x8192x8192" $O/bench06.log | awk '{print $1,$3,$7}'
