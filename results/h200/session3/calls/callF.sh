set -u
export GIT_COMMIT=07dce1533a03
O=/tmp/f; mkdir -p $O
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); timeout $l bash -c "$*" > $O/$n.log 2>&1; echo "$n: status $? in $(( $(date +%s)-t0 ))s" | tee -a $O/summary.txt; }
s build 150 "make -j16 -C 06_tensor_core_wmma all"
s test06 150 "cd 06_tensor_core_wmma && ./test_06_tensor_core_wmma '[06]'"
grep -E "test cases" $O/test06.log | tail -1
for r in 1 2; do s tune$r 80 "./06_tensor_core_wmma/06_tensor_core_wmma --tune --sizes 4096,8192 --csv $O/tune_F.csv"; done
paste <(grep -E "^(m_128x128_w64x64_k32_s[23]|m_128x256_w64x64_k32_s3|cublas_tf32)" $O/tune1.log | grep -v "^[a-z_0-9]* *[0-9]* *[0-9]* *[0-9]* *[0-9]" | awk '{print $1,$3,$7}') <(grep -E "^(m_128x128_w64x64_k32_s[23]|m_128x256_w64x64_k32_s3|cublas_tf32)" $O/tune2.log | grep -v "^[a-z_0-9]* *[0-9]* *[0-9]* *[0-9]* *[0-9]" | awk '{print $7}')
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma/06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
python3 tools/sass_loop.py 'Tf32MmaWideBLi128ELi128ELi32ELi64ELi64ELi2ELi4ELi4EELb1' --listing < /tmp/sass.txt > $O/sass_loop_mma_k32_s2_wide_b.txt; sed -n 2,4p $O/sass_loop_mma_k32_s2_wide_b.txt | cut -c1-200
tar czf $OUT/f.tgz -C /tmp f
