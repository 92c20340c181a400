set -u
export GIT_COMMIT=a31d4c2cf340
O=$OUT/e2; mkdir -p $O
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); timeout $l bash -c "$*" > $O/$n.log 2>&1; echo "$n: status $? in $(( $(date +%s)-t0 ))s" | tee -a $O/summary.txt; }
[ -x 06_tensor_core_wmma/06_tensor_core_wmma ] || s build 200 "make -j16 06"
s sanitize06 150 "make -C 06_tensor_core_wmma sanitize"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $O/sanitize06.log
s precision06 40 "./06_tensor_core_wmma/06_tensor_core_wmma --precision --sizes 1024,4096"
s profile06 100 "make --no-print-directory profile-06 PROFILE_ARGS='--size 4096 --warmup 1 --reps 1 --no-check'"
M=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_issued.avg.pct_of_peak_sustained_active,launch__registers_per_thread,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
s ncu_mma 60 "ncu --clock-control none -k regex:mma_tf32_gemm --metrics $M ./06_tensor_core_wmma/06_tensor_core_wmma --variant tf32_mma_sync --size 4096 --warmup 1 --reps 1 --no-check"
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma/06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
for p in 'Tf32MmaInputsLi128ELi128ELi32ELi64ELi64ELi2ELi4ELi8EELb1' 'Tf32MmaTiesAwayLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EELb1' 'Tf32InputsLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EEL8Mainloop1EL8Epilogue1ELb1' 'Tf32InputsLi128ELi128ELi16ELi64ELi32ELi3ELi4ELi8EEL8Mainloop1EL8Epilogue1ELb1'; do python3 tools/sass_loop.py "$p" --listing < /tmp/sass.txt > $O/sass_$p.txt; sed -n 2,4p $O/sass_$p.txt | cut -c1-200; done
s tune06 100 "./06_tensor_core_wmma/06_tensor_core_wmma --tune --sizes 4096,8192 --csv $O/tune_06_s3.csv"
grep -A8 "^fastest" $O/tune06.log
